/** An error the console API answered with: its problem `detail`, `code` and field errors. */
export class ConsoleApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** fetch for the console API: JSON in and out, problems turned into ConsoleApiError. Used inside TanStack Query only. */
export async function consoleFetch<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? "GET",
    headers: init.body !== undefined ? { "content-type": "application/json" } : undefined,
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    credentials: "same-origin",
  });
  const text = await res.text();
  const data: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const p = (data ?? {}) as { detail?: string; code?: string; errors?: { field: string; detail: string }[] };
    const fields = Object.fromEntries((p.errors ?? []).map((e) => [e.field, e.detail]));
    throw new ConsoleApiError(p.detail ?? `Request failed (${res.status})`, res.status, p.code, fields);
  }
  return data as T;
}
