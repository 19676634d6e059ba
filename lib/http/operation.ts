import type { RawJson } from "./raw-json";
import type { z } from "zod";
import type { Scope } from "../auth/scopes";
import type { Ctx } from "../auth/actor";
import type { ProblemCode } from "./errors";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * One API operation, declared once: the route wrapper enforces it and the OpenAPI document
 * is built from it, so the two cannot drift.
 */
export type Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> = {
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/v1/athletes/{athlete_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** `athlete`: PATs and OAuth access tokens. `app`: client-credentials tokens only. */
  auth: "athlete" | "app";
  scope?: Scope;
  params?: P;
  query?: Q;
  body?: B;
  /** Accepts `Idempotency-Key` (CONTRACT §5). */
  idempotent?: boolean;
  response: { status: 200 | 201 | 202 | 204; description: string; schema?: R };
  /** Problem codes this operation can answer beyond the ones every operation can. */
  errors: ProblemCode[];
};

export function defineOperation<
  P extends z.ZodType = z.ZodNever,
  Q extends z.ZodType = z.ZodNever,
  B extends z.ZodType = z.ZodNever,
  R extends z.ZodType = z.ZodNever,
>(op: Operation<P, Q, B, R>): Operation<P, Q, B, R> {
  return op;
}

export type HandlerArgs<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = {
  ctx: Ctx;
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  /** Path parameters as the router gave them, for routes whose path is fixed in the document (`/athletes/me/…`). */
  rawParams: Record<string, string | string[]>;
  req: Request;
  /** What the route's `before` step produced, outside the write's transaction. */
  prepared?: unknown;
};

export type OperationHandler<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType> = (
  args: HandlerArgs<P, Q, B>,
) => Promise<z.input<R> | RawJson>;
