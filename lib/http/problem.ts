import { ApiError, PROBLEM_CODES, type FieldError, type ProblemCode } from "./errors";
import { knownLengthResponse } from "./known-length";

export type ProblemDocument = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  errors?: FieldError[];
  trace_id?: string;
  [extension: string]: unknown;
};

export function problemDocument(
  baseUrl: string,
  code: ProblemCode,
  detail: string,
  extra: { errors?: FieldError[]; traceId?: string; extensions?: Record<string, unknown> } = {},
): ProblemDocument {
  const { status, title } = PROBLEM_CODES[code];
  // Extension members never replace the standard ones.
  const doc: ProblemDocument = { ...extra.extensions, type: `${baseUrl}/problems/${code}`, title, status, detail, code };
  if (extra.errors?.length) doc.errors = extra.errors;
  if (extra.traceId) doc.trace_id = extra.traceId;
  return doc;
}

/** RFC 9457 problem response. */
export function problemResponse(
  baseUrl: string,
  err: ApiError,
  opts: { traceId?: string; headers?: HeadersInit } = {},
): Response {
  const headers = new Headers(opts.headers);
  for (const [k, v] of Object.entries(err.headers)) headers.set(k, v);
  headers.set("Content-Type", "application/problem+json");
  headers.set("Cache-Control", "no-store");
  const body = problemDocument(baseUrl, err.code, err.message, {
    errors: err.errors,
    traceId: opts.traceId,
    extensions: err.extensions,
  });
  return knownLengthResponse(JSON.stringify(body), { status: err.status, headers });
}
