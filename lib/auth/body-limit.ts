import "server-only";
import { randomUUID } from "node:crypto";
import { errorToResponse } from "../http/api-route";
import { ApiError } from "../http/errors";
import { readBodyUpTo } from "../http/body";

/** Auth.js's forms (sign-in, sign-out, the CSRF token) are a few hundred bytes. */
export const MAX_AUTH_BODY_BYTES = 64 * 1024;

/**
 * Auth.js reads a POST body whole (`req.text()`), however large it is. This reads at most
 * `limit` bytes of it first, from the stream, and answers 413 `payload_too_large` as soon as
 * there are more (or the declared length is more), without reading on; within the limit,
 * Auth.js gets the request again with the bytes read.
 */
export function withBodyLimit<R extends Request>(
  handler: (req: R) => Promise<Response>,
  limit = MAX_AUTH_BODY_BYTES,
): (req: R) => Promise<Response> {
  return async (req) => {
    if (!req.body) return handler(req);
    const tooLarge = () =>
      errorToResponse(new ApiError("payload_too_large", `Request bodies here are limited to ${limit} bytes.`), req, randomUUID());
    const read = await readBodyUpTo(req, limit);
    if (read.tooLarge) return tooLarge();
    if (read.cut) return errorToResponse(new ApiError("invalid_request", read.detail), req, randomUUID());
    // The request's own class (Next.js's NextRequest in the app), so Auth.js sees what it expects.
    const Same = req.constructor as new (input: string, init: RequestInit) => R;
    return handler(new Same(req.url, { method: req.method, headers: req.headers, body: read.bytes, signal: req.signal }));
  };
}
