import { knownLengthResponse } from "./known-length";

/**
 * A response body that is a file, not JSON (an activity export): bytes, their media type and
 * the name a browser saves them under. `handle()` and `consoleHandler` send it as it is, with
 * the usual headers (Request-Id, rate-limit windows, no-store) and `Content-Disposition:
 * attachment`, so a browser downloads it rather than rendering what a user uploaded.
 */
const FILE_BODY = Symbol("fileBody");

export type FileBody = { readonly [FILE_BODY]: true; readonly bytes: Uint8Array; readonly contentType: string; readonly fileName: string };

/**
 * What an operation that answers a file declares (`Operation.response.files`): the media types
 * it may have, for the document, and what decides among them.
 */
export type FileAnswer = { contentTypes: readonly string[]; description: string };

export function fileBody(file: { bytes: Uint8Array; contentType: string; fileName: string }): FileBody {
  return { [FILE_BODY]: true, ...file };
}

export function isFileBody(value: unknown): value is FileBody {
  return typeof value === "object" && value !== null && FILE_BODY in value;
}

/**
 * RFC 6266 `attachment` with an ASCII `filename` (every other character becomes `_`, so no
 * quote, backslash or control character can end the parameter) and the exact name in
 * `filename*` (RFC 8187) for clients that read it.
 */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  // encodeURIComponent throws on a lone surrogate: it is U+FFFD here, never a 500.
  const encoded = encodeURIComponent(fileName.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The file as an HTTP answer, with the request's headers. */
export function fileResponse(headers: Headers, status: number, file: FileBody): Response {
  headers.set("Content-Type", file.contentType);
  headers.set("Content-Disposition", contentDisposition(file.fileName));
  // The bytes are an athlete's upload: never let a browser sniff them into something it runs.
  headers.set("X-Content-Type-Options", "nosniff");
  return knownLengthResponse(file.bytes, { status, headers });
}
