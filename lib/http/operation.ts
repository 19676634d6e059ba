import type { RawJson } from "./raw-json";
import type { FileAnswer, FileBody } from "./file-body";
import type { z } from "zod";
import type { Scope } from "../auth/scopes";
import type { Actor, Ctx } from "../auth/actor";
import { inTransaction, type Tx } from "../db/transaction";
import type { ProblemCode } from "./errors";
import type { MultipartSpec, ReceivedFile } from "../uploads/multipart";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type WriteMethod = Exclude<HttpMethod, "GET">;

/**
 * What a write verb receives: `Ctx` whose `db` is the transaction the route wrapper (or
 * `inTransaction`) opened. A plain `Ctx` is not one, so a write verb cannot be called outside
 * a transaction, and `Tx` has no `transaction` to open a nested one with. It still is a `Ctx`,
 * so a write verb hands it to reads as it is.
 */
export type WriteCtx<A extends Actor = Actor> = Omit<Ctx<A>, "db"> & { db: Tx };

/**
 * A write verb called outside the route wrappers (seed, tests, scripts), in a transaction of
 * its own opened by `inTransaction`, as a wrapper would: `inWriteCtx(ctx, (ctx) => createActivity({ ctx, … }))`.
 */
export function inWriteCtx<A extends Actor, T>(ctx: Ctx<A>, verb: (ctx: WriteCtx<A>) => Promise<T>): Promise<T> {
  return inTransaction(ctx.db, (tx) => verb({ ...ctx, db: tx }));
}

/** The context an operation's handler gets: reads the plain database, writes the open transaction. */
export type CtxFor<M extends HttpMethod> = [M] extends [WriteMethod] ? WriteCtx : Ctx;

/**
 * What a route takes and answers, declared once with zod: both wrappers (`handle`,
 * `consoleHandler`) parse path, query and body with it and shape the answer by it.
 */
export type RouteIo<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  M extends HttpMethod = HttpMethod,
> = {
  method: M;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body is `multipart/form-data`, streamed: `body` then parses its text fields and the
   * handler gets the one file part as `file` (lib/uploads/multipart.ts).
   */
  multipart?: MultipartSpec;
  response: {
    status: 200 | 201 | 202 | 204;
    schema?: R;
    /** The `Location` header of a successful answer, from the answer as shaped. */
    location?(answer: z.output<R>): string;
  };
};

/**
 * One API operation, declared once: the route wrapper enforces it and the OpenAPI document
 * is built from it, so the two cannot drift.
 */
export type Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  M extends HttpMethod = HttpMethod,
> = RouteIo<P, Q, B, R, M> & {
  /** `files`: the answer is a file (`FileBody`), not JSON. */
  response: { description: string; files?: FileAnswer };
  /** OpenAPI path template, e.g. `/v1/athletes/{athlete_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** `athlete`: PATs and OAuth access tokens. `app`: client-credentials tokens only. */
  auth: "athlete" | "app";
  scope?: Scope;
  /** A second scope the whole operation needs besides `scope` (an export shows where the athlete trained). */
  extraScope?: Scope;
  /** Accepts `Idempotency-Key` (CONTRACT §5). */
  idempotent?: boolean;
  /** Problem codes this operation can answer beyond the ones every operation can. */
  errors: ProblemCode[];
};

export function defineOperation<
  P extends z.ZodType = z.ZodNever,
  Q extends z.ZodType = z.ZodNever,
  B extends z.ZodType = z.ZodNever,
  R extends z.ZodType = z.ZodNever,
  M extends HttpMethod = HttpMethod,
>(op: Operation<P, Q, B, R, M>): Operation<P, Q, B, R, M> {
  return op;
}

export type HandlerArgs<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, M extends HttpMethod = HttpMethod, X = undefined> = {
  ctx: CtxFor<M>;
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  /** The file part of a multipart body (`RouteIo.multipart`); absent if none was sent. */
  file?: ReceivedFile;
  /** Path parameters as the router gave them, for routes whose path is fixed in the document (`/athletes/me/…`). */
  rawParams: Record<string, string | string[]>;
  req: Request;
  /** What the route's `before` step produced, outside the write's transaction (`undefined` without one). */
  prepared: X;
};

/** The arguments of a route's `before` step: it runs on the plain database, before the transaction. */
export type BeforeArgs<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = Omit<HandlerArgs<P, Q, B>, "ctx" | "prepared"> & {
  ctx: Ctx;
};

/**
 * What a handler answers: what its response schema takes or kept JSON bytes; without a response
 * schema, a file (an export) or nothing (a 204 has no body).
 */
export type HandlerAnswer<R extends z.ZodType> = [R] extends [z.ZodNever] ? FileBody | void : z.input<R> | RawJson | FileBody;

export type OperationHandler<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType,
  M extends HttpMethod = HttpMethod,
  X = undefined,
> = (args: HandlerArgs<P, Q, B, M, X>) => Promise<HandlerAnswer<R>>;
