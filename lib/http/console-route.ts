import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Ctx } from "../auth/actor";
import { sessionUserId } from "../auth/session";
import { getDb } from "../db/client";
import { ApiError } from "./errors";
import { PAGE_PERSON_HEADER } from "./page-person";
import { getEnv } from "../env";
import { clientAddress, fromTrustedProxy } from "./client-address";
import type { FileBody } from "./file-body";
import type { RawJson } from "./raw-json";
import { baseHeaders, beforeWrite, errorToResponse, fileFingerprint, idempotentWrite, jsonResponse, rateLimited, parseRequest, route, runVerb, setLocation, shapeResponse, type RouteExports, type RouteHandler } from "./api-route";
import type { BeforeArgs, CtxFor, HandlerArgs, HttpMethod, RouteIo, WriteCtx } from "./operation";
import { consumeRateLimit, type RateLimitResult } from "./rate-limit";
import { requestStarted, requestsFirst } from "./requests-first";

/**
 * The console's windows are this many times an API client's (RATE_LIMIT_15MIN, RATE_LIMIT_DAILY):
 * its pages poll while something is under way (uploads processing, a delivery log open), and a
 * person dropping a season of files or watching two endpoints' logs would otherwise use up the
 * window an app is given and be refused by their own console.
 */
export const CONSOLE_LIMIT_SCALE = 5;

/**
 * Same-origin check for cookie-authenticated writes (OWASP CSRF: verify Origin, fall back
 * to Sec-Fetch-Site). A request with neither header is refused. The Origin's scheme counts
 * too where the service knows the one the browser used: a trusted proxy's X-Forwarded-Proto, else
 * BASE_URL's for BASE_URL's own host (`http://host` is another origin than `https://host`).
 */
export function assertSameOrigin(req: Request): void {
  const origin = req.headers.get("origin");
  // A proxy's X-Forwarded-Host names the host the browser used; a client's own is only its word.
  const trusted = fromTrustedProxy(req);
  const forwarded = trusted ? req.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  const host = forwarded || req.headers.get("host");
  if (origin) {
    const from = URL.parse(origin);
    if (from && from.host === host) {
      const proto = trusted ? req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() : undefined;
      const base = new URL(getEnv().baseUrl);
      const scheme = proto ? `${proto}:` : base.host === host ? base.protocol : undefined;
      if (scheme === undefined || from.protocol === scheme) return;
    }
  } else if (req.headers.get("sec-fetch-site") === "same-origin") {
    return;
  }
  // CONTRACT §3 has no code of its own for this: a request the console cannot accept as it came.
  throw new ApiError("invalid_request", "This change must come from the console's own pages (same origin).");
}

/**
 * A console route file's exports (`route()`'s, for the console): its methods, a 405 with the
 * path's `Allow` for the rest and for methods no route serves, and OPTIONS naming the same; no
 * CORS (only the console's own pages call these), and not counted in /v1's windows.
 */
export function consoleRoute(handlers: Partial<Record<HttpMethod, RouteHandler>>): RouteExports {
  return route(handlers, "console");
}

/**
 * A console route, declared like an `Operation` (path, query and body in, the answer out) but
 * outside the public document. Its answer always has a schema: a verb that answers nothing
 * answers JSON `null` (the console's pages read every answer as JSON).
 */
export type ConsoleOperation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  M extends HttpMethod = HttpMethod,
> = Omit<RouteIo<P, Q, B, R, M>, "response"> & {
  response: { status: 200 | 201 | 202; schema: R; location?(answer: z.output<R>): string };
  /** A create that takes `Idempotency-Key`, as /v1's do (the console's forms send one per submission). */
  idempotent?: boolean;
  /**
   * For an idempotent create whose answer shows a secret kept only as a hash: its answer as
   * stored for a replay, without the secret, and the replay's answer, with the secret issued
   * again for the object the first request made (api-route.ts `OneTimeSecretReplay`).
   */
  oneTimeSecret?: {
    strip: (answer: z.output<R>) => z.output<R>;
    reissue: (ctx: WriteCtx, stored: z.output<R>) => Promise<z.input<R>>;
  };
};

/**
 * Path parameters as ids: text of 1 to 64 characters, as /v1's (every id this service makes is
 * shorter), so anything longer is the 404 of a path that names nothing before any query runs,
 * and is not repeated back in it (parsing still refuses NUL and malformed Unicode); the verbs
 * judge the ids.
 */
export const ConsoleIdParam = z.string().min(1).max(64);

export function pathParams<K extends string>(...names: K[]): z.ZodObject<Record<K, typeof ConsoleIdParam>> {
  return z.strictObject(Object.fromEntries(names.map((n) => [n, ConsoleIdParam])) as Record<K, typeof ConsoleIdParam>);
}

type ConsoleArgs<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, M extends HttpMethod, X> = Omit<
  HandlerArgs<P, Q, B, M>,
  "rawParams" | "req" | "prepared"
> & {
  /** What the `before` step produced, outside the write's transaction. */
  prepared: X;
};
type ConsoleBefore<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, X> = (
  args: Omit<BeforeArgs<P, Q, B>, "rawParams" | "req">,
) => Promise<X>;
type ConsoleVerb<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, M extends HttpMethod, X> = (
  args: ConsoleArgs<P, Q, B, M, X>,
) => Promise<z.input<R> | RawJson | FileBody | (null extends z.input<R> ? void : never)>;

/**
 * The console's adapter: a signed-in session acts as the person, with every scope. Writes
 * must come from the same origin and run in one transaction, which this opens. Every request
 * of a signed-in person counts against their own windows (CONTRACT §10's limits, as a PAT
 * owner's), before the body is read or anything slow (a webhook handshake, a hash) runs; a
 * cross-site request is refused before it is counted, so another site cannot spend someone's
 * windows. Path, query and body are parsed by the operation's schemas and the answer shaped
 * by its response schema, as in `handle`; failures are the same problem documents.
 *
 * With three arguments, the second is slow work that must not hold the write's transaction (a
 * webhook handshake, see `handle`): it runs first, on the plain database, must not write, and
 * what it returns is the verb's `prepared`.
 */
export function consoleHandler<
  P extends z.ZodType = z.ZodNever,
  Q extends z.ZodType = z.ZodNever,
  B extends z.ZodType = z.ZodNever,
  R extends z.ZodType = z.ZodNever,
  M extends HttpMethod = HttpMethod,
>(op: ConsoleOperation<P, Q, B, R, M>, fn: ConsoleVerb<P, Q, B, R, M, undefined>): RouteHandler;
export function consoleHandler<
  P extends z.ZodType = z.ZodNever,
  Q extends z.ZodType = z.ZodNever,
  B extends z.ZodType = z.ZodNever,
  R extends z.ZodType = z.ZodNever,
  M extends HttpMethod = HttpMethod,
  X = undefined,
>(
  op: ConsoleOperation<P, Q, B, R, M>,
  before: ConsoleBefore<P, Q, B, X>,
  fn: ConsoleVerb<P, Q, B, R, M, X>,
): RouteHandler;
export function consoleHandler<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, M extends HttpMethod, X>(
  op: ConsoleOperation<P, Q, B, R, M>,
  ...steps: [ConsoleVerb<P, Q, B, R, M, undefined>] | [ConsoleBefore<P, Q, B, X>, ConsoleVerb<P, Q, B, R, M, X>]
): RouteHandler {
  return async (req, routeCtx) => {
    const traceId = randomUUID();
    let rl: RateLimitResult | undefined;
    /** What the request's body holds of the process's upload memory, given back once answered. */
    let release = () => {};
    // Counted while it is answered, as handle() counts (requests-first.ts).
    const answered = requestStarted();
    try {
      const db = await getDb();
      // A request refused for its session counts against its address, as /v1's without a valid
      // token do (`identify`): a cookie replayed in a loop meets a window too, then 429 (which
      // keeps the 401's challenge, so the page still learns the session ended). A window of the
      // console's own and as wide as a person's: pages left open after signing out poll, and
      // several people share one address; neither spends /v1's window for that address.
      const unauthorized = async (err: ApiError): Promise<never> => {
        rl = await consumeRateLimit(db, `console-addr:${clientAddress(req)}`, Date.now(), CONSOLE_LIMIT_SCALE);
        throw rl.exceeded ? Object.assign(rateLimited(rl.exceeded), { unauthorized: err }) : err;
      };
      const userId = await sessionUserId(req);
      if (!userId) {
        return await unauthorized(new ApiError("token_missing", "Sign in to use the console: its endpoints take a signed-in session (apps call /v1 with a token)."));
      }
      // A page rendered for one person acts for nobody else: after another sign-in in another tab, its requests are refused as a session that ended.
      const pageFor = req.headers.get(PAGE_PERSON_HEADER);
      if (pageFor !== null && pageFor !== userId) {
        return await unauthorized(new ApiError("token_invalid", "This page was opened for another account than the one now signed in in this browser. Reload it."));
      }
      if (op.method !== "GET") assertSameOrigin(req);
      rl = await consumeRateLimit(db, `console-user:${userId}`, Date.now(), CONSOLE_LIMIT_SCALE);
      if (rl.exceeded) {
        const w = rl.exceeded;
        throw new ApiError("rate_limited", `The console's ${w.name} limit of ${w.limit} requests is used up; retry in ${w.resetS} s.`);
      }
      if (op.multipart) {
        answered();
        await requestsFirst();
      }
      const { params, query, body, file, release: releaseBody } = await parseRequest(op, req, routeCtx, answered);
      release = releaseBody;
      const actor = { kind: "session" as const, userId };
      // A create the console sends with a key (a person pressing Save again after a lost answer)
      // is made once, as on /v1; the keys are the person's own, apart from their tokens'.
      const key = op.idempotent ? req.headers.get("idempotency-key") : null;
      const idem = {
        principal: `console:${userId}`,
        key,
        // An uploaded file counts as /v1's does: the same key with another file is 422.
        fingerprint: `${op.method} ${new URL(req.url).pathname} ${JSON.stringify(body)}${fileFingerprint(key, file)}`,
      };
      const headers = baseHeaders(traceId, rl);
      let run: (ctx: Ctx) => Promise<unknown>;
      if (steps.length === 1) {
        const [fn] = steps;
        // The context matches the method (CtxFor<M>): `runVerb` decides it from the same method.
        run = (ctx) => fn({ params, query, body, file, prepared: undefined, ctx: ctx as CtxFor<M> });
      } else {
        const [before, fn] = steps;
        // A stored answer without its secret is answered only in the write's transaction, which reissues it.
        const step = await beforeWrite(db, op.oneTimeSecret ? { ...idem, key: null } : idem, () => before({ params, query, body, file, ctx: { db, actor } }));
        if ("stored" in step) {
          headers.set("Idempotent-Replayed", "true");
          setLocation(op, headers, step.stored.body);
          return jsonResponse(headers, step.stored.status, step.stored.body);
        }
        const { prepared } = step;
        run = (ctx) => fn({ params, query, body, file, prepared, ctx: ctx as CtxFor<M> });
      }
      if (op.multipart) await requestsFirst();
      // A verb that answers nothing answers JSON null, which the schema then must allow.
      const answer = await runVerb(db, op.method, { actor }, (ctx) => {
        const secret = op.oneTimeSecret;
        return idempotentWrite(
          ctx.db,
          { ...idem, status: op.response.status },
          async () => shapeResponse(op, (await run(ctx)) ?? null),
          secret && {
            strip: (answer) => secret.strip(answer as z.output<R>),
            // Shaped as a first answer is: the replay's secret is new.
            reissue: async (stored) => shapeResponse(op, await secret.reissue(ctx as WriteCtx, stored as z.output<R>)),
          },
        );
      });
      if (answer.replayed) headers.set("Idempotent-Replayed", "true");
      setLocation(op, headers, answer.payload);
      return jsonResponse(headers, answer.status, answer.payload);
    } catch (err) {
      return errorToResponse(err, req, traceId, rl, "console");
    } finally {
      answered();
      release();
    }
  };
}
