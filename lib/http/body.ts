import { ApiError } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;

/** A body that cannot be read at all: the problem names `body` as its field (CONTRACT §3). */
function unreadable(detail: string): ApiError {
  return new ApiError("invalid_request", detail, { errors: [{ field: "body", code: "invalid_request", detail }] });
}

/** How much of a refused body is still read (and dropped) after a refusal, unless the caller says otherwise. */
export const REFUSED_BODY_DROP_BYTES = 8 * MAX_BODY_BYTES;
/** How long after a refusal the rest of its body is still taken: ample for the answer to reach the client first. */
export const REFUSED_BODY_LINGER_MS = 2_000;

function tooLarge(): ApiError {
  return new ApiError("payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
}

/**
 * What every refusal does with the rest of a body it will not use, so that its answer reaches
 * the client: a lingering close, as web servers make it. The answer goes out at once, and the
 * rest is read and dropped meanwhile, so a client that sends it all can send its next request on
 * the same connection. Past `bound` more bytes the reading stops (Node.js then stops reading
 * the socket: nothing piles up), and a body still unfinished REFUSED_BODY_LINGER_MS after the
 * refusal is cancelled, which closes the connection once the answer has long been sent.
 *
 * Answer first, take the rest after: reading on before answering makes the client wait for an
 * answer it could have had (an upload streamed past 25 MiB was answered only once 50 MiB had
 * arrived), and cancelling the body destroys the Node request under it (in Next.js a route's
 * body is read from the Node request itself) and with it the connection, so it comes last.
 */
export function dropRestAfterAnswer(reader: ReadableStreamDefaultReader<Uint8Array> | undefined, bound = REFUSED_BODY_DROP_BYTES): void {
  if (!reader) return;
  let ended = false;
  const linger = setTimeout(() => {
    if (!ended) reader.cancel().catch(() => {});
  }, REFUSED_BODY_LINGER_MS);
  linger.unref();
  const end = () => {
    ended = true;
    clearTimeout(linger);
  };
  void (async () => {
    let dropped = 0;
    try {
      while (dropped <= bound) {
        const { done, value } = await reader.read();
        if (done) return end();
        dropped += value.byteLength;
      }
    } catch {
      // The client went away.
      end();
    }
  })();
}

/**
 * A body read from its stream up to `limit` bytes: the bytes, or, as soon as it holds (or
 * declares) more, `tooLarge`, its rest then taken as every refusal's is (`dropRestAfterAnswer`)
 * while the caller answers. Nothing past the limit is buffered. Every endpoint that reads a body
 * whole reads it here.
 */
export async function readBodyUpTo(
  req: Request,
  limit: number,
): Promise<{ tooLarge: false; cut: false; bytes: Buffer<ArrayBuffer> } | { tooLarge: true } | { tooLarge: false; cut: true; detail: string }> {
  if (Number(req.headers.get("content-length") ?? 0) > limit) {
    dropRestAfterAnswer(req.body?.getReader());
    return { tooLarge: true };
  }
  const chunks: Uint8Array[] = [];
  if (req.body) {
    const reader = req.body.getReader();
    let size = 0;
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (err) {
        // The client closed the connection before its body was whole (Node.js: "aborted", with
        // the code ECONNRESET): the client's doing, to be answered as such, and not to be taken
        // for a database that went away, whose errors carry the same code (db-errors.ts).
        return { tooLarge: false, cut: true, detail: `The request body ended before it was whole (${(err as Error).message || "the connection closed"}).` };
      }
      const { done, value } = next;
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        dropRestAfterAnswer(reader);
        return { tooLarge: true };
      }
      chunks.push(value);
    }
  }
  return { tooLarge: false, cut: false, bytes: Buffer.concat(chunks) };
}

/**
 * Reads a JSON body of at most 1 MiB: refuses a larger one without buffering it, a compressed
 * one, bytes that are not UTF-8, and text that is not JSON, each with its own message.
 */
export async function readJsonBody(req: Request): Promise<unknown> {
  // Nothing here inflates a body: compressed bytes would only be reported as "not UTF-8".
  const encoding = req.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    throw unreadable(`The request body must not be compressed (Content-Encoding: ${encoding.slice(0, 40)}): send the JSON as it is.`);
  }
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared <= MAX_BODY_BYTES) {
    const type = req.headers.get("content-type");
    // application/json or a +json type (not application/json-seq), with parameters after `;`.
    if (type && !/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type.trim())) {
      throw unreadable("The request body must be JSON with `Content-Type: application/json`.");
    }
    // JSON is UTF-8 (RFC 8259), and a charset parameter has no effect on it: one naming an
    // ASCII-compatible charset (ISO-8859-1, us-ascii, as some HTTP clients add) is ignored, but a
    // body declared UTF-16 or UTF-32 would be read as what it is not, and is refused in words.
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type ?? "")?.[1]?.toLowerCase();
    if (charset && /^(utf-?(16|32)|ucs-?[24])/.test(charset)) {
      throw unreadable(`The request body must be JSON in UTF-8: charset=${charset.slice(0, 40)} is not read. Send it as UTF-8, with \`Content-Type: application/json\`.`);
    }
  }
  const read = await readBodyUpTo(req, MAX_BODY_BYTES);
  if (read.tooLarge) throw tooLarge();
  if (read.cut) throw unreadable(read.detail);
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
