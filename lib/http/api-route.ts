import "server-only";
import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import { getDb, type Db } from "../db/client";
import { getEnv } from "../env";
import { errorText, log } from "../log";
import type { Actor, Ctx } from "../auth/actor";
import { resolveBearer, type ResolvedBearer } from "../tokens/resolve-bearer";
import { clientAddress } from "./client-address";
import { ApiError } from "./errors";
import { problemResponse } from "./problem";
import { fileResponse, isFileBody } from "./file-body";
import { requireScopes } from "../auth/require-scope";
import { resourceMetadataUrl } from "../oauth/resources";
import { MCP_DEFAULT_SCOPES } from "../oauth/discovery";
import type { TokenResource } from "../db/schema";
import { databaseUnavailableError, isDatabaseUnavailable, isRetriable, RETRY_AFTER_S } from "./db-errors";
import { consumeRateLimit, rateLimitHeaders, type RateLimitResult, type RateWindow } from "./rate-limit";
import { readJsonBody } from "./body";
import { isRawJson } from "./raw-json";
import { parseQuery, parseWith } from "./validation";
import { reachedIds } from "./schemas";
import { requestStarted, requestsFirst, type Answering } from "./requests-first";
import { readMultipartForm, type ReceivedFile } from "../uploads/multipart";
import { allowAnyOrigin, anyOriginAnswer, preflightFields } from "./cors";
import { assertIdempotencyKeyForm, claimIdempotencyKey, completeIdempotencyKey, findStoredAnswer } from "./idempotency";
import { inWriteCtx, type BeforeArgs, type CtxFor, type HandlerArgs, type HttpMethod, type Operation, type OperationHandler, type RouteIo, type WriteCtx } from "./operation";
import { knownLengthResponse, tellBodyLength } from "./known-length";
import { REFUSED_HEADER } from "../../scripts/refused-header.mjs";

export type RouteContext = { params: Promise<Record<string, string | string[]>> };
export type RouteHandler = ((req: Request, ctx: RouteContext) => Promise<Response>) & {
  /** The operation a `/v1` handler serves, so tests can hold routes and the OpenAPI document together. */
  operation?: Operation;
};

function policyHeader(): string {
  const env = getEnv();
  return `"15min";q=${env.rateLimit15Min};w=900, "daily";q=${env.rateLimitDaily};w=86400`;
}

/** Every answer's headers: the trace id, no caching, and the caller's rate-limit windows. */
export function baseHeaders(traceId: string, rl?: RateLimitResult): Headers {
  const h = new Headers({ "Request-Id": traceId, "Cache-Control": "no-store" });
  if (rl) for (const [k, v] of Object.entries(rateLimitHeaders(rl))) h.set(k, v);
  else h.set("RateLimit-Policy", policyHeader());
  return h;
}

/**
 * The RFC 6750 §3 challenge of a 401: where the resource's RFC 9728 metadata is, and for `/mcp`
 * the scopes to ask for first (CONTRACT §12), plus `error="invalid_token"` when a token was sent.
 */
function unauthorizedChallenge(resource: TokenResource, err: ApiError, sent: boolean): string {
  const env = getEnv();
  const parts = [`resource_metadata="${resourceMetadataUrl(env, resource)}"`];
  if (resource === "mcp") parts.push(`scope="${MCP_DEFAULT_SCOPES.join(" ")}"`);
  if (sent) parts.push(`error="invalid_token"`, `error_description="${err.message.replace(/["\\]/g, "")}"`);
  return `Bearer ${parts.join(", ")}`;
}

/**
 * The console's 401 challenge (RFC 9110 §11.6.1: a 401 names one): it takes a signed-in
 * session, not a bearer token, so it points no client at an OAuth resource's metadata.
 */
const CONSOLE_CHALLENGE = 'Session realm="console"';

/** Every failure becomes a problem document; unknown ones are logged with the trace id. */
export function errorToResponse(
  err: unknown,
  req: Request,
  traceId: string,
  rl?: RateLimitResult,
  resource: TokenResource | "console" = "v1",
): Response {
  const env = getEnv();
  const headers = baseHeaders(traceId, rl);
  if (err instanceof ApiError) {
    // A token was sent unless the refusal is that none was (an empty header sends none).
    const refused = err.status === 401 ? err : (err as { unauthorized?: ApiError }).unauthorized;
    if (refused) {
      headers.set("WWW-Authenticate", resource === "console" ? CONSOLE_CHALLENGE : unauthorizedChallenge(resource, refused, refused.code !== "token_missing"));
    }
    if (err.status === 503) headers.set("Retry-After", RETRY_AFTER_S);
    return problemResponse(env.baseUrl, err, { headers });
  }
  if (isDatabaseUnavailable(err)) {
    log.warn("database unavailable", { trace_id: traceId, error: String(err) });
    return problemResponse(env.baseUrl, databaseUnavailableError(), { headers });
  }
  if (isRetriable(err)) {
    log.warn("busy", { trace_id: traceId, error: err.message });
    headers.set("Retry-After", RETRY_AFTER_S);
    return problemResponse(env.baseUrl, new ApiError("service_unavailable", err.message), { headers });
  }
  log.error("unhandled error", {
    trace_id: traceId,
    method: req.method,
    path: new URL(req.url).pathname,
    error: errorText(err),
  });
  return problemResponse(
    env.baseUrl,
    new ApiError("internal_error", `The service failed. Quote trace id ${traceId} when reporting it.`),
    { headers, traceId },
  );
}

export function rateLimited(w: RateWindow): ApiError {
  return new ApiError("rate_limited", `The ${w.name} limit of ${w.limit} requests is used up; retry in ${w.resetS} s.`);
}

/**
 * Who is calling, counted against their windows. A PAT's or an athlete's access token's
 * lookup counts it in the same statement (`countedLookup` in lib/http/rate-limit.ts), so most
 * requests make one statement before their verb; an app's client-credentials token, checked
 * from memory, is counted here. A caller without a valid token is counted per address
 * instead, so every answer names a window (CONTRACT §10) and guessing tokens is limited too;
 * a revoked or expired token never spends its owner's limit. The 401 is rethrown with the
 * window it used; past that window, a 429 that keeps the 401's challenge.
 */
export async function identify(db: Db, req: Request, resource: TokenResource = "v1"): Promise<{ bearer: ResolvedBearer; rl: RateLimitResult }> {
  try {
    const bearer = await resolveBearer(db, req.headers.get("authorization"), resource);
    return { bearer, rl: bearer.counted ?? (await consumeRateLimit(db, bearer.rateBucket)) };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      const rl = await consumeRateLimit(db, `addr:${clientAddress(req)}`);
      // Past the address's window the answer is a 429, which still carries the 401's challenge
      // (RFC 9110 §11.6.1 allows it on any answer): a client behind a shared address (an
      // assistant's host) still learns where to get a token, or that its own was refused.
      throw Object.assign(rl.exceeded ? Object.assign(rateLimited(rl.exceeded), { unauthorized: err }) : err, { rateLimit: rl });
    }
    throw err;
  }
}

export function rateLimitOf(err: unknown): RateLimitResult | undefined {
  return (err as { rateLimit?: RateLimitResult } | null)?.rateLimit;
}

/**
 * Answers that run no operation (405, unknown paths, OPTIONS) count and carry headers like any
 * other: `err`'s problem, or with null a 204.
 */
async function answerWithoutOperation(req: Request, err: ApiError | null, extraHeaders: Record<string, string> = {}): Promise<Response> {
  return publicAnswer(req, (headers) => {
    for (const [k, v] of Object.entries(extraHeaders)) headers.set(k, v);
    return err ? problemResponse(getEnv().baseUrl, err, { headers }) : new Response(null, { status: 204, headers });
  });
}

/**
 * An answer anyone may have, with or without a token (the OpenAPI document, a 405, a preflight),
 * counted and headed like every other `/v1` answer (CONTRACT §10): the caller's token's windows
 * when it sent a valid one, else its address's. `answer` gets the headers to send.
 */
export async function publicAnswer(req: Request, answer: (headers: Headers) => Response): Promise<Response> {
  const traceId = randomUUID();
  let rl: RateLimitResult | undefined;
  try {
    rl = (await identify(await getDb(), req)).rl;
  } catch (e) {
    // A bad token or an unreachable database does not change what this path answers.
    rl = rateLimitOf(e);
  }
  if (rl?.exceeded) return anyOriginAnswer(errorToResponse(rateLimited(rl.exceeded), req, traceId, rl));
  return answer(allowAnyOrigin(baseHeaders(traceId, rl)));
}

function checkCredentialKind(op: Operation, actor: Actor): void {
  if (op.auth === "app" && actor.kind !== "app") {
    throw new ApiError("client_credentials_required", "This endpoint takes a token from the client-credentials grant.");
  }
  if (op.auth === "athlete" && actor.kind === "app") {
    throw new ApiError(
      "client_credentials_not_allowed",
      "A client-credentials token acts as the app itself and cannot read athlete data.",
    );
  }
}

export function checkBilling(bearer: ResolvedBearer): void {
  const b = bearer.billing;
  if (!b || b.hasSubscription) return;
  if (b.trialEndsAt && b.trialEndsAt.getTime() > Date.now()) return;
  throw new ApiError(
    "subscription_required",
    b.trialEndsAt
      ? `The account's trial ended at ${b.trialEndsAt.toISOString()} and it has no subscription.`
      : "The account has no active subscription or trial.",
  );
}

function checkScope(op: Operation, actor: Actor): void {
  if (actor.kind === "session" || actor.kind === "app") return;
  requireScopes(actor, [op.scope, op.extraScope].filter((s) => s !== undefined));
}

function idempotencyPrincipal(actor: Actor): string {
  switch (actor.kind) {
    case "app":
      return `app:${actor.clientId}`;
    case "oauth":
      return `oauth:${actor.clientId}:${actor.userId}`;
    default:
      return `user:${actor.userId}`;
  }
}

/** The query of an operation that takes none. */
const NO_QUERY = z.strictObject({});

/**
 * Path, query and body parsed by the route's schemas; any failure is a 400 problem with `errors[]`.
 * `answering` is the request's count (requests-first.ts): a JSON body still arriving is the
 * client's time, not the thread's, and is not counted.
 */
export async function parseRequest<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  io: RouteIo<P, Q, B, z.ZodType, HttpMethod>,
  req: Request,
  routeCtx: RouteContext,
  answering: Answering,
): Promise<Omit<HandlerArgs<P, Q, B>, "ctx" | "prepared"> & { url: URL; release: () => void }> {
  const url = new URL(req.url);
  const rawParams = (await routeCtx.params) ?? {};
  // An operation without a schema for a part never reads it: `undefined` stands for `never`.
  // Its query is still held to having no parameters: `?force=true` on a DELETE, or `?limit=` on
  // a list that is not paged, is refused naming it, not ignored.
  const params = (io.params ? parseParams(io.params, rawParams) : undefined) as z.output<P>;
  const query = (io.query ? parseQuery(io.query, url.searchParams) : url.search ? void parseQuery(NO_QUERY, url.searchParams) : undefined) as z.output<Q>;
  const { body, file, release } = await parseBody(io, req, answering);
  return { params, query, body: body as z.output<B>, file, rawParams, req, url, release };
}

/** The body as the route declares it: JSON, or a multipart form's text fields and its one file part. */
async function parseBody(io: RouteIo, req: Request, answering: Answering): Promise<{ body: unknown; file?: ReceivedFile; release: () => void }> {
  if (!io.multipart) return { body: io.body ? parseWith(io.body, await answering.notWhile(() => readJsonBody(req)), "body") : undefined, release: () => {} };
  const form = await readMultipartForm(req, io.multipart);
  try {
    return { body: io.body ? parseWith(io.body, form.fields, "body") : undefined, file: form.file, release: form.release };
  } catch (err) {
    form.release();
    throw err;
  }
}

/**
 * The answer to an id the token cannot reach, where it is not 404: every athlete or team id the
 * token does not reach gets the same 403, so ids cannot be probed (SPEC §4.1).
 */
const UNREACHABLE_ID = {
  athlete: () => new ApiError("athlete_not_reachable", "This token may not act on that athlete."),
  team: () => new ApiError("team_not_reachable", "This token's owner does not coach or administer that team."),
} satisfies Record<NonNullable<ReturnType<typeof reachedIds.get>>["reach"], () => ApiError>;

/**
 * The path's ids. One that cannot be an id of this API (longer than any it makes, or holding a
 * NUL) names no resource, so it is answered as an unknown id is (SPEC §7): 404 `not_found`, or,
 * where the route's schema marks the id as one of reach (`reachedIds`: AthleteIdParam,
 * TeamIdParam), the 403 its kind gets for any id the token cannot reach. By the schema, not by
 * the name: an athlete's own membership of a team (`team_id` too) is 404 when unknown.
 */
function parseParams<P extends z.ZodType>(schema: P, raw: Record<string, string | string[]>): z.output<P> {
  try {
    return parseWith(schema, raw, "path");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const fields = [...new Set((err.errors ?? []).map((e) => e.field))];
    const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
    const field = fields.length === 1 ? shape[fields[0]!] : undefined;
    const reach = field ? reachedIds.get(field)?.reach : undefined;
    if (reach) throw UNREACHABLE_ID[reach]();
    throw new ApiError("not_found", `No resource at this path: ${fields.join(", ") || "an id"} is not an id this API makes.`);
  }
}

/**
 * A multipart body's file counts in its Idempotency-Key fingerprint, its name as its bytes: the
 * same key with another file, or the same bytes under another name (which the upload keeps as
 * its `file_name`), is 422.
 */
export function fileFingerprint(key: string | null, file: ReceivedFile | undefined): string {
  return key !== null && file ? ` file:${JSON.stringify(file.name)}:${createHash("sha256").update(file.bytes).digest("hex")}` : "";
}

/** Sets the answer's `Location` when the route names one (a 201 or 202 pointing at what it made). */
export function setLocation(io: RouteIo, headers: Headers, payload: unknown): void {
  if (io.response.location && payload !== undefined && payload !== null) headers.set("Location", io.response.location(payload));
}

/** The answer as the route's response schema shapes it; anything it refuses is a 500. */
export function shapeResponse(io: RouteIo, result: unknown): unknown {
  if (isFileBody(result)) return result;
  if (!io.response.schema) return undefined;
  if (!isRawJson(result)) return io.response.schema.parse(result);
  if (process.env.NODE_ENV !== "production") io.response.schema.parse(JSON.parse(result.text));
  return result;
}

/**
 * An answer whose bytes are kept and shared between requests (a cached streams answer), sent as
 * they are. Given as bytes, `Response` copies them twice (WebIDL's copy of a BufferSource, then
 * the copy its body stream enqueues): for an 84 KB answer that was about 90 µs of a 1.5 ms
 * request, and 2.3 MB of copying for a full-resolution one. A stream of the one chunk sends the
 * kept bytes themselves; nothing writes to them. Its length is told as any other's
 * (known-length.ts).
 */
function sharedBytesResponse(headers: Headers, status: number, bytes: Uint8Array): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  return new Response(body, { status, headers: tellBodyLength(headers, bytes.byteLength) });
}

/** A JSON answer with the request's headers, or an empty one for 204 and for nothing to send. */
export function jsonResponse(headers: Headers, status: number, payload: unknown): Response {
  if (isFileBody(payload)) return fileResponse(headers, status, payload);
  if (payload === undefined || status === 204) return new Response(null, { status, headers });
  headers.set("Content-Type", "application/json");
  if (isRawJson(payload) && payload.bytes) return sharedBytesResponse(headers, status, payload.bytes);
  const body = isRawJson(payload) ? payload.text : JSON.stringify(payload);
  return knownLengthResponse(body, { status, headers });
}

/**
 * Runs a route's verb with the context its method calls for: a read gets the plain database,
 * a write the transaction this opens (`inWriteCtx`), the only one it runs in: the
 * Idempotency-Key's claim and stored answer go into the same one.
 */
export function runVerb<T>(
  db: Db,
  method: HttpMethod,
  ctx: Omit<Ctx, "db">,
  verb: (ctx: Ctx | WriteCtx) => Promise<T>,
): Promise<T> {
  return method === "GET" ? verb({ ...ctx, db }) : inWriteCtx({ ...ctx, db }, verb);
}

/**
 * A write under an `Idempotency-Key` (CONTRACT §5, Stripe's semantics), in the write's own
 * transaction: the key is claimed first; a repeat of the same request answers what the first
 * answered (`replayed`), a different one is 422, one while the first still runs 409. Without a
 * key it only runs. Stored answers keep the value, not a SQL-built wrapper.
 */
export async function idempotentWrite(
  tx: Db,
  { principal, key, fingerprint, status }: { principal: string; key: string | null; fingerprint: string; status: number },
  produce: () => Promise<unknown>,
  secret?: OneTimeSecretReplay,
): Promise<{ replayed: boolean; status: number; payload: unknown }> {
  const claim = key === null ? undefined : await claimIdempotencyKey(tx, principal, key, fingerprint);
  if (claim?.kind === "replay") return { replayed: true, status: claim.status, payload: secret ? await secret.reissue(claim.body) : claim.body };
  const shaped = await produce();
  const out: unknown = isRawJson(shaped) ? JSON.parse(shaped.text) : shaped;
  if (claim) await completeIdempotencyKey(tx, claim, status, secret ? secret.strip(out) : (out ?? null));
  return { replayed: false, status, payload: out };
}

/**
 * A create whose answer shows a secret the service keeps only as a hash (a PAT, a client
 * secret: CONTRACT §6). Its stored answer must not hold that secret (sealed is not hashed: the
 * key that seals it opens it), so it is stored without it (`strip`), and a replay answers with
 * the secret issued again for the object the first request made (`reissue`, in the replay's
 * transaction): the one whose answer was lost is replaced, never read back.
 */
export type OneTimeSecretReplay = {
  strip: (answer: unknown) => unknown;
  reissue: (stored: unknown) => Promise<unknown>;
};

type IdempotencyScope = { principal: string; key: string | null; fingerprint: string };

/**
 * The slow step a write runs before its transaction (a webhook handshake), unless the request
 * repeats one already answered under its `Idempotency-Key`: then the stored answer, and the
 * step never runs again (a retry sends no second handshake, and is answered even if the endpoint
 * has gone away since). `handle` and `consoleHandler` both go through here.
 */
export async function beforeWrite<X>(
  db: Db,
  { principal, key, fingerprint }: IdempotencyScope,
  before: () => Promise<X>,
): Promise<{ stored: { status: number; body: unknown } } | { prepared: X }> {
  // A key of the wrong form is refused before the slow step, not after it.
  if (key !== null) assertIdempotencyKeyForm(key);
  const stored = key === null ? undefined : await findStoredAnswer(db, principal, key, fingerprint);
  return stored ? { stored: { status: stored.status, body: stored.body } } : { prepared: await before() };
}

/**
 * The `/v1` adapter: bearer resolution, rate limit, credential kind, subscription, scope,
 * parsing, idempotency, one transaction for writes, response shaping and problem mapping.
 *
 * With three arguments, the second is slow work that must not hold the write's transaction (a
 * webhook handshake waits up to 5 s on someone else's server): it runs first, on the plain
 * database, must not write, and what it returns is the handler's `prepared` (as in
 * `consoleHandler`).
 */
export function handle<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, M extends HttpMethod>(
  op: Operation<P, Q, B, R, M>,
  fn: OperationHandler<P, Q, B, R, M, undefined>,
): RouteHandler;
export function handle<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, M extends HttpMethod, X>(
  op: Operation<P, Q, B, R, M>,
  before: (args: BeforeArgs<P, Q, B>) => Promise<X>,
  fn: OperationHandler<P, Q, B, R, M, X>,
): RouteHandler;
export function handle<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, M extends HttpMethod, X>(
  op: Operation<P, Q, B, R, M>,
  ...steps: [OperationHandler<P, Q, B, R, M, undefined>] | [(args: BeforeArgs<P, Q, B>) => Promise<X>, OperationHandler<P, Q, B, R, M, X>]
): RouteHandler {
  const handler: RouteHandler = async (req, routeCtx) => {
    const traceId = randomUUID();
    let rl: RateLimitResult | undefined;
    /** What the request's body holds of the process's upload memory, given back once answered. */
    let release = () => {};
    // Counted while it is answered, so bulk work waits (requests-first.ts); a multipart body
    // is bulk work itself, and stops counting once the request is let in.
    const answered = requestStarted();
    try {
      const db = await getDb();
      const identified = await identify(db, req);
      const bearer = identified.bearer;
      rl = identified.rl;
      if (rl.exceeded) throw rateLimited(rl.exceeded);
      const actor = bearer.actor;
      checkCredentialKind(op, actor);
      checkBilling(bearer);
      checkScope(op, actor);

      if (op.multipart) {
        answered();
        await requestsFirst();
      }
      const { url, release: releaseBody, ...args } = await parseRequest(op, req, routeCtx, answered);
      release = releaseBody;
      const headers = allowAnyOrigin(baseHeaders(traceId, rl));
      // The handler's context matches its method (CtxFor<M>); `runVerb` decides it from the same method.

      // The handler's context matches its method (CtxFor<M>); `runVerb` decides it from the same method.
      let call: (ctx: Ctx | WriteCtx) => Promise<unknown>;
      if (steps.length === 1) {
        const [fn] = steps;
        call = (ctx) => fn({ ...args, prepared: undefined, ctx: ctx as CtxFor<M> });
        if (op.method === "GET") {
          const result = await runVerb(db, op.method, { actor, self: bearer.self }, (ctx) => call(ctx));
          return jsonResponse(headers, op.response.status, shapeResponse(op, result));
        }
      }

      const key = op.idempotent ? req.headers.get("idempotency-key") : null;
      const fingerprint = `${op.method} ${url.pathname} ${JSON.stringify(args.body)}${fileFingerprint(key, args.file)}`;
      if (steps.length === 2) {
        const [before, fn] = steps;
        const step = await beforeWrite(db, { principal: idempotencyPrincipal(actor), key, fingerprint }, () => before({ ...args, ctx: { db, actor } }));
        if ("stored" in step) {
          headers.set("Idempotent-Replayed", "true");
          setLocation(op, headers, step.stored.body);
          return jsonResponse(headers, step.stored.status, step.stored.body);
        }
        const { prepared } = step;
        call = (ctx) => fn({ ...args, prepared, ctx: ctx as CtxFor<M> });
      }
      if (op.multipart) await requestsFirst();
      const answer = await runVerb(db, op.method, { actor }, (ctx) =>
        idempotentWrite(ctx.db, { principal: idempotencyPrincipal(actor), key, fingerprint, status: op.response.status }, async () =>
          shapeResponse(op, await call(ctx)),
        ),
      );
      if (answer.replayed) headers.set("Idempotent-Replayed", "true");
      setLocation(op, headers, answer.payload);
      return jsonResponse(headers, answer.status, answer.payload);
    } catch (err) {
      return anyOriginAnswer(errorToResponse(err, req, traceId, rl ?? rateLimitOf(err)));
    } finally {
      answered();
      release();
    }
  };
  handler.operation = op as unknown as Operation;
  return handler;
}

/** The methods a route file exports, served or answered 405. */
export const ROUTE_METHODS: readonly HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** What a route file exports: its methods, and OPTIONS. */
export type RouteExports = Record<HttpMethod | "OPTIONS", RouteHandler>;

/**
 * A route file's exports: the methods it serves, a 405 problem with `Allow` for the rest
 * (Next.js's own 405 has no body), and OPTIONS: 204 with the same `Allow` and the rate-limit
 * headers every `/v1` answer carries (Next.js's own would list every method the file exports).
 */
export function route(handlers: Partial<Record<HttpMethod, RouteHandler>>, surface: "v1" | "console" = "v1"): RouteExports {
  const allowed = ROUTE_METHODS.filter((m) => handlers[m]);
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ");
  // The console's routes answer their own pages only: no CORS, and outside /v1's windows.
  const answer = surface === "console" ? consoleAnswer : answerWithoutOperation;
  const refuse = (req: Request, method: string) =>
    answer(req, new ApiError("method_not_allowed", `${method} is not served here; this path serves ${allow}.`), { Allow: allow });
  const notAllowed: RouteHandler = (req) => refuse(req, req.method);
  // Also a browser's preflight: what a browser app may send here (lib/http/cors.ts). And a
  // method no route serves (PROPFIND …), which the front server hands on as OPTIONS.
  const options: RouteHandler = (req) => {
    const unserved = refusedByFrontServer(req);
    if (unserved?.code === "method_not_allowed") return refuse(req, unserved.method);
    if (surface === "console") return answer(req, null, { Allow: allow });
    return answer(req, null, { Allow: allow, ...preflightFields(allow, "Authorization, Content-Type, Idempotency-Key") });
  };
  return { ...(Object.fromEntries(ROUTE_METHODS.map((m) => [m, handlers[m] ?? notAllowed])) as Record<HttpMethod, RouteHandler>), OPTIONS: options };
}

/** A console route's answer that runs no operation (405, OPTIONS, an unknown path): no CORS, not counted in /v1's windows. */
async function consoleAnswer(req: Request, err: ApiError | null, extraHeaders: Record<string, string> = {}): Promise<Response> {
  const headers = baseHeaders(randomUUID());
  for (const [k, v] of Object.entries(extraHeaders)) headers.set(k, v);
  return err ? problemResponse(getEnv().baseUrl, err, { headers }) : new Response(null, { status: 204, headers });
}

/**
 * A route file's handlers served at a path whose dynamic segments are fixed: the route files
 * under `app/v1/athletes/me/` serve what those under `app/v1/athletes/[athlete_id]/` serve, with
 * `athlete_id` = `me`, the path nearly every client calls. Next.js finds a static path with one
 * lookup; for a dynamic one it tries each dynamic route's pattern in turn and, once found, builds
 * that route's pattern again (with a `structuredClone`) on every request: at half load, about
 * 0.15 ms of `/v1/athletes/me`'s 2.7 ms of CPU (bench/README.md, api-read item 14). Each
 * wrapper keeps its handler's `operation`.
 */
export function atFixedParams(handlers: RouteExports, params: Record<string, string>): RouteExports {
  // One object for every request, frozen: no request can change what the next one is given.
  const fixed = Promise.resolve(Object.freeze({ ...params }));
  return Object.fromEntries(
    [...ROUTE_METHODS, "OPTIONS" as const].map((m) => {
      const handler = handlers[m];
      const wrapped: RouteHandler = (req) => handler(req, { params: fixed });
      wrapped.operation = handler.operation;
      return [m, wrapped];
    }),
  ) as RouteExports;
}

/** Unknown `/v1` paths: a problem 404, never an HTML page. */
export const notFoundRoute: RouteHandler = (req) => answerWithoutOperation(req, notFoundError(req));

/** Unknown `/api/console` paths: the same 404, as the console's answers are (no CORS, not counted in /v1's windows). */
export const consoleNotFoundRoute: RouteHandler = (req) => consoleAnswer(req, notFoundError(req));

function notFoundError(req: Request): ApiError {
  const refused = refusedByFrontServer(req);
  // A method no route serves, at a path no route serves either: the path is what is wrong.
  const told = refused && refused.code !== "method_not_allowed" ? new ApiError(refused.code, refused.detail) : undefined;
  return told ?? new ApiError("not_found", `No API endpoint at ${new URL(req.url).pathname}.`);
}

type FrontRefusal = { code: "not_found" | "invalid_request"; detail: string } | { code: "method_not_allowed"; method: string };

/**
 * The refusal the front server decided for a request no route may see as it came (an empty
 * segment, escapes that are not UTF-8: handed to the catch-all route; a method no route serves:
 * handed to its path's route as OPTIONS) and handed on to be answered as every `/v1` answer is.
 * The front server removes the header from what clients send, so only it can set it.
 */
function refusedByFrontServer(req: Request): FrontRefusal | undefined {
  const told = req.headers.get(REFUSED_HEADER);
  if (told === null) return undefined;
  try {
    const { code, detail, method } = JSON.parse(told) as { code: unknown; detail: unknown; method: unknown };
    if ((code === "not_found" || code === "invalid_request") && typeof detail === "string") return { code, detail };
    if (code === "method_not_allowed" && typeof method === "string" && /^[A-Z-]{1,32}$/i.test(method)) return { code, method };
  } catch {
    // Not the front server's (a server started without it): the path's own answer.
  }
  return undefined;
}
