import { ApiError } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;

/** A body that cannot be read at all: the problem names `body` as its field (CONTRACT §3). */
function unreadable(detail: string): ApiError {
  return new ApiError("invalid_request", detail, { errors: [{ field: "body", code: "invalid_request", detail }] });
}

/**
 * Reads a JSON body of at most 1 MiB: refuses a larger one before buffering it, bytes that
 * are not UTF-8, and text that is not JSON, each with its own message.
 */
export async function readJsonBody(req: Request): Promise<unknown> {
  const declared = req.headers.get("content-length");
  if (declared && Number(declared) > MAX_BODY_BYTES) {
    throw new ApiError("payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
  }
  const type = req.headers.get("content-type");
  if (type && !/^application\/([\w.+-]+\+)?json\b/i.test(type.trim())) {
    throw unreadable("The request body must be JSON with `Content-Type: application/json`.");
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel();
        throw new ApiError("payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
      }
      chunks.push(value);
    }
  }
  if (size === 0) throw unreadable("A JSON request body is required.");
  const bytes = Buffer.concat(chunks);
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
