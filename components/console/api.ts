import { PAGE_PERSON_HEADER } from "@/lib/http/page-person";

/** An error the console API answered with (its problem `detail`, `code` and field errors), or no answer at all (`status` 0). */
export class ConsoleApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly fields: Record<string, string> = {},
    /** A 429 or a 503: how long the service asked to be left alone, in ms (`retryAfterOf`). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * A 4xx answer, which asking again would only repeat. No answer at all (status 0), a 5xx and a
 * 429 are not: the connection or the server may do better on a retry, and a rate limit's window
 * reopens (`retryAfterOf` says when).
 */
export function isClientError(error: unknown): boolean {
  return error instanceof ConsoleApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

/**
 * The longest a page waits on a Retry-After before asking again: the console's own 15-minute
 * window can answer 900 s, and a page that stays silent for a quarter of an hour looks stuck.
 * Asking once a minute meanwhile costs nothing that counts.
 */
export const MAX_RETRY_AFTER_MS = 60_000;
// A 429 or 503 that says nothing of when to come back: a few seconds, not at once.
const DEFAULT_RETRY_AFTER_MS = 5_000;

/**
 * How long to wait, in ms, before asking again after a 429 (too many requests) or a 503 (the
 * service unavailable for now): what its Retry-After said, at most MAX_RETRY_AFTER_MS. Null for
 * any other error, which either is final (`isClientError`) or may be asked again at once.
 */
export function retryAfterOf(error: unknown): number | null {
  if (!(error instanceof ConsoleApiError) || (error.status !== 429 && error.status !== 503)) return null;
  return error.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
}

/**
 * A Retry-After header's wait in ms, from 0 to MAX_RETRY_AFTER_MS: whole seconds or an HTTP
 * date (RFC 9110 §10.2.3). Undefined when missing or not either.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** What a person reads when no answer came: the browser's own words ("Failed to fetch") say nothing to them. */
export const UNREACHABLE = "The service could not be reached. Check your connection and try again.";

let pagePerson: string | null = null;

/** Says whose page this is (the console's layout, from the session it was rendered with): every console request names them. */
export function setPagePerson(id: string): void {
  pagePerson = id;
}

/** The headers every console request carries (PAGE_PERSON_HEADER, lib/http/page-person.ts, once the page knows its person), with the request's own. */
export function consoleHeaders(own: Record<string, string> = {}): Record<string, string> {
  return pagePerson ? { ...own, [PAGE_PERSON_HEADER]: pagePerson } : own;
}

/**
 * fetch with the session cookie and the page's person. A request that gets no answer (offline,
 * DNS, a dropped connection) is a ConsoleApiError in words.
 */
export async function consoleRequest(path: string, init: Omit<RequestInit, "headers"> & { headers?: Record<string, string> } = {}): Promise<Response> {
  try {
    return await fetch(path, { ...init, headers: consoleHeaders(init.headers), credentials: "same-origin" });
  } catch {
    throw new ConsoleApiError(UNREACHABLE, 0);
  }
}

/**
 * What a change's own message says when the session has ended (signed out in another tab,
 * expired), and a read's: the SessionEndedBanner says what happened and offers "Sign in again",
 * once for the page, so the action's notice or the list's error does not say it again.
 */
export const SESSION_ENDED_NOT_CHANGED = "Nothing was changed.";
export const SESSION_ENDED_NOT_LOADED = "Not loaded.";

/** Told on `window` whenever a console request finds the session ended (SessionEndedBanner listens). */
export const SESSION_ENDED_EVENT = "aas:session-ended";

/** Says that the session ended: the banner offers to sign in again, from any page of the console. */
export function sessionEnded(): void {
  if (typeof window !== "undefined") window.dispatchEvent(new Event(SESSION_ENDED_EVENT));
}

/**
 * The error an answer that is not ok stands for (`method`: the request's). A body that is not a
 * problem document (a proxy's HTML 502 page) holds nothing a person can use, so the status is
 * said instead. A 401 from the console's routes means the session ended: told to the banner,
 * which says so for the whole page; the error itself says only that nothing was changed (or
 * loaded, for a read), since the problem's detail speaks to developers.
 */
export async function problemOf(res: Response, method = "GET"): Promise<ConsoleApiError> {
  // A 429 that keeps the console's 401 challenge refused a request without a session (too many
  // from this address): the session ended all the same.
  if (res.status === 401 || (res.status === 429 && res.headers.get("www-authenticate")?.startsWith("Session"))) {
    sessionEnded();
    const read = method === "GET" || method === "HEAD";
    return new ConsoleApiError(read ? SESSION_ENDED_NOT_LOADED : SESSION_ENDED_NOT_CHANGED, 401, "token_missing");
  }
  const retryAfterMs = res.status === 429 || res.status === 503 ? (parseRetryAfter(res.headers.get("retry-after")) ?? DEFAULT_RETRY_AFTER_MS) : undefined;
  // A body cut off on the way is no problem document either; the status still says what happened.
  const p = parseJson(await res.text().catch(() => ""));
  if (!p || typeof p !== "object" || Array.isArray(p)) return new ConsoleApiError(statusSentence(res.status), res.status, undefined, {}, retryAfterMs);
  const { detail, code, errors } = p as { detail?: unknown; code?: unknown; errors?: unknown };
  const fields = Array.isArray(errors)
    ? Object.fromEntries(
        errors
          .filter((e): e is { field: string; detail: string } => typeof e?.field === "string" && typeof e?.detail === "string")
          .map((e) => [e.field, e.detail]),
      )
    : {};
  // A form pressed again while its first press is still being saved (the same key, on PostgreSQL):
  // the service's words speak of the header; these say what to do.
  const said = code === "idempotency_key_in_use" ? STILL_SAVING : typeof detail === "string" && detail ? detail : statusSentence(res.status);
  return new ConsoleApiError(
    said,
    res.status,
    typeof code === "string" ? code : undefined,
    fields,
    retryAfterMs,
  );
}

/** What a form says when it was sent again while the first send of it is still being saved. */
export const STILL_SAVING = "This is still being saved from your earlier try. Wait a moment and try again.";

/**
 * fetch for the console API: JSON in and out, problems turned into ConsoleApiError. Used inside
 * TanStack Query only. `idempotencyKey` goes out as `Idempotency-Key` (a create; see
 * `useSubmissionKey`).
 */
export async function consoleFetch<T>(path: string, init: { method?: string; body?: unknown; idempotencyKey?: string } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (init.idempotencyKey) headers["idempotency-key"] = init.idempotencyKey;
  const method = init.method ?? "GET";
  const res = await consoleRequest(path, {
    method,
    headers,
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
  if (!res.ok) throw await problemOf(res, method);
  let text: string;
  try {
    text = await res.text();
  } catch {
    throw new ConsoleApiError(UNREACHABLE, 0);
  }
  if (!text) return null as T;
  const data = parseJson(text);
  if (data === undefined) {
    throw new ConsoleApiError(`The service answered with something the console cannot read (${res.status}). Try again in a moment.`, res.status);
  }
  return data as T;
}

/** An error status in words; a retry is suggested only where waiting can change the answer. */
function statusSentence(status: number): string {
  const retry = status >= 500 || status === 429 ? " Try again in a moment." : "";
  return `The service answered with an error (${status}).${retry}`;
}

/** The JSON value of `text`, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
