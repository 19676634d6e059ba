import { expect } from "vitest";
import type { Operation } from "../http/operation";
import { OPERATIONS } from "../openapi/operations";

const ROUTES = OPERATIONS.map((op) => ({
  op,
  pattern: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  // A literal segment beats a parameter, as in the router (`/athletes/me/activities` over `{athlete_id}`).
  params: (op.path.match(/\{/g) ?? []).length,
}));

/** The `/v1` operation a request names, if any. */
export function operationFor(method: string, path: string): Operation | undefined {
  const pathname = new URL(path, "http://localhost").pathname;
  return ROUTES.filter((r) => r.op.method === method.toUpperCase() && r.pattern.test(pathname)).sort((a, b) => a.params - b.params)[0]?.op;
}

/**
 * Holds a successful `/v1` answer to its operation's response schema, strictly: the schema must
 * accept the body (nothing missing or mistyped) and give it back unchanged (zod drops keys it
 * does not name, so an extra field, from a mapping or from SQL-built JSON, shows as a
 * difference). Other answers (problems, pages, 204s) are left to the test that asked.
 */
export async function expectWireShape(method: string, path: string, res: Response): Promise<void> {
  const op = operationFor(method, path);
  if (!op?.response.schema || !res.ok || !res.headers.get("content-type")?.startsWith("application/json")) return;
  const body: unknown = await res.clone().json();
  const parsed = op.response.schema.safeParse(body);
  const what = `${method} ${path} answered outside ${op.operationId}'s response schema`;
  expect(parsed.error?.issues ?? [], what).toEqual([]);
  expect(body, what).toStrictEqual(parsed.data);
}
