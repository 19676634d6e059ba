import { ApiError } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;

/** A body that cannot be read at all: the problem names `body` as its field (CONTRACT §3). */
function unreadable(detail: string): ApiError {
  return new ApiError("invalid_request", detail, { errors: [{ field: "body", code: "invalid_request", detail }] });
}

/** How much of a refused body is still read (and dropped) so the 413 reaches the client. */
const DRAIN_LIMIT_BYTES = 8 * MAX_BODY_BYTES;

function tooLarge(): ApiError {
  return new ApiError("payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
}

/**
 * Reads and drops the rest of a refused body. Cancelling instead leaves unread bytes on the
 * kept-alive connection, and the client's next request on it fails; past `DRAIN_LIMIT_BYTES`
 * the stream is cancelled after all, so no one can make the service read forever.
 */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let dropped = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    dropped += value.byteLength;
    if (dropped > DRAIN_LIMIT_BYTES) {
      await reader.cancel();
      return;
    }
  }
}

/**
 * A body read from its stream up to `limit` bytes: the bytes, or, as soon as it holds (or
 * declares) more, `tooLarge` with the reader where the reading stopped (none when the declared
 * length alone refused it), so the caller decides what becomes of the rest: drained, cancelled
 * or left. Nothing past the limit is buffered. Every endpoint that reads a body reads it here.
 */
export async function readBodyUpTo(
  req: Request,
  limit: number,
): Promise<{ tooLarge: false; bytes: Buffer<ArrayBuffer> } | { tooLarge: true; reader: ReadableStreamDefaultReader<Uint8Array> | undefined }> {
  if (Number(req.headers.get("content-length") ?? 0) > limit) return { tooLarge: true, reader: undefined };
  const chunks: Uint8Array[] = [];
  if (req.body) {
    const reader = req.body.getReader();
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) return { tooLarge: true, reader };
      chunks.push(value);
    }
  }
  return { tooLarge: false, bytes: Buffer.concat(chunks) };
}

/**
 * Reads a JSON body of at most 1 MiB: refuses a larger one without buffering it, bytes that
 * are not UTF-8, and text that is not JSON, each with its own message.
 */
export async function readJsonBody(req: Request): Promise<unknown> {
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared <= MAX_BODY_BYTES) {
    const type = req.headers.get("content-type");
    if (type && !/^application\/([\w.+-]+\+)?json\b/i.test(type.trim())) {
      throw unreadable("The request body must be JSON with `Content-Type: application/json`.");
    }
  }
  const read = await readBodyUpTo(req, MAX_BODY_BYTES);
  if (read.tooLarge) {
    const rest = read.reader ?? (req.body && declared <= DRAIN_LIMIT_BYTES ? req.body.getReader() : undefined);
    if (rest) await drain(rest);
    throw tooLarge();
  }
  const bytes = read.bytes;
  if (bytes.byteLength === 0) throw unreadable("A JSON request body is required.");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw unreadable("The request body is not valid UTF-8.");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw unreadable(`The request body is not valid JSON: ${(err as Error).message}`);
  }
}
