import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Ctx } from "../auth/actor";
import { sessionUserId } from "../auth/session";
import { getDb } from "../db/client";
import { ApiError } from "./errors";
import { isRawJson } from "./raw-json";
import { errorToResponse, type RouteHandler } from "./api-route";
import { readJsonBody } from "./body";
import { consumeRateLimit, type RateLimitResult } from "./rate-limit";
import { parseWith } from "./validation";

/** Path parameters: text, checked like /v1's (no NUL, well-formed Unicode) before any query sees it. */
const ConsoleParams = z.record(z.string(), z.string());

/**
 * Same-origin check for cookie-authenticated writes (OWASP CSRF: verify Origin, fall back
 * to Sec-Fetch-Site). A request with neither header is refused.
 */
export function assertSameOrigin(req: Request): void {
  const origin = req.headers.get("origin");
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  if (origin) {
    try {
      if (new URL(origin).host === host) return;
    } catch {
      // fall through to refusal
    }
  } else if (req.headers.get("sec-fetch-site") === "same-origin") {
    return;
  }
  // CONTRACT §3 has no code of its own for this: a request the console cannot accept as it came.
  throw new ApiError("invalid_request", "This change must come from the console's own pages (same origin).");
}

type ConsoleArgs<B extends z.ZodType | undefined> = {
  ctx: Ctx;
  body: B extends z.ZodType ? z.output<B> : undefined;
  params: Record<string, string>;
  url: URL;
  /** What `opts.before` produced, outside the write's transaction. */
  prepared?: unknown;
};

/**
 * The console's adapter: a signed-in session acts as the person, with every scope. Writes
 * run in one transaction and must come from the same origin. Every request of a signed-in
 * person counts against their own windows (CONTRACT §10's limits, as a PAT owner's), before
 * the body is read or anything slow (a webhook handshake, a hash) runs; a cross-site request is
 * refused before it is counted, so another site cannot spend someone's windows.
 */
export function consoleHandler<B extends z.ZodType | undefined = undefined>(
  opts: {
    body?: B;
    status?: number;
    /** Slow work that must not hold the write's transaction (see `handle`). It must not write. */
    before?: (args: ConsoleArgs<B>) => Promise<unknown>;
  },
  fn: (args: ConsoleArgs<B>) => Promise<unknown>,
): RouteHandler {
  return async (req, routeCtx) => {
    const traceId = randomUUID();
    let rl: RateLimitResult | undefined;
    try {
      const userId = await sessionUserId(req);
      if (!userId) throw new ApiError("token_missing", "Sign in to use the console: its endpoints take a signed-in session (apps call /v1 with a token).");
      const write = req.method !== "GET" && req.method !== "HEAD";
      if (write) assertSameOrigin(req);
      const db = await getDb();
      rl = await consumeRateLimit(db, `console-user:${userId}`);
      if (rl.exceeded) {
        const w = rl.exceeded;
        throw new ApiError("rate_limited", `The console's ${w.name} limit of ${w.limit} requests is used up; retry in ${w.resetS} s.`);
      }
      const params = parseWith(ConsoleParams, (await routeCtx.params) ?? {}, "path");
      const body = opts.body ? parseWith(opts.body, await readJsonBody(req), "body") : undefined;
      const base = { body: body as ConsoleArgs<B>["body"], params, url: new URL(req.url) };
      const actor = { kind: "session" as const, userId };
      const prepared = opts.before ? await opts.before({ ...base, ctx: { db, actor } }) : undefined;
      const run = (ctxDb: typeof db) => fn({ ...base, ctx: { db: ctxDb, actor }, prepared });
      const result = write ? await db.transaction((tx) => run(tx)) : await run(db);
      const headers = { "Cache-Control": "no-store", "Content-Type": "application/json" };
      return new Response(isRawJson(result) ? result.text : JSON.stringify(result ?? null), { status: opts.status ?? 200, headers });
    } catch (err) {
      return errorToResponse(err, req, traceId, rl);
    }
  };
}
