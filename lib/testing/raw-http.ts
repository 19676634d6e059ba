import net from "node:net";
import zlib from "node:zlib";

/** What came back: a parsed answer, or why none did. */
export type RawAnswer =
  | { answered: true; status: number; headers: Record<string, string>; body: Buffer; ms: number }
  | { answered: false; status: 0; error: "timeout" | "closed without an answer" | "malformed answer"; detail: string; ms: number };

/**
 * Sends `bytes` as they are (an HTTP/1.1 request, however broken) over a fresh connection to
 * 127.0.0.1:`port` and reads the answer until the server closes: requests carry
 * `Connection: close`. fetch() and undici refuse to send most of what hostile clients send
 * (control characters in headers, bad UTF-8 in the target, a body shorter than its length).
 * `halfClose` ends the sending side after the bytes, as a client that gave up mid-body does.
 */
export function sendRaw(port: number, bytes: Buffer, opts: { timeoutMs?: number; halfClose?: boolean } = {}): Promise<RawAnswer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (a: RawAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(a);
    };
    const timer = setTimeout(
      () => finish({ answered: false, status: 0, error: "timeout", detail: `no answer within ${opts.timeoutMs ?? 15_000} ms`, ms: performance.now() - t0 }),
      opts.timeoutMs ?? 15_000,
    );
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      // A complete answer ends the wait even if the server keeps the connection.
      const parsed = parseAnswer(Buffer.concat(chunks), true);
      if (parsed) finish({ answered: true, ...parsed, ms: performance.now() - t0 });
    });
    const end = () => {
      const raw = Buffer.concat(chunks);
      if (raw.length === 0) return finish({ answered: false, status: 0, error: "closed without an answer", detail: "", ms: performance.now() - t0 });
      const parsed = parseAnswer(raw, false);
      finish(parsed ? { answered: true, ...parsed, ms: performance.now() - t0 } : { answered: false, status: 0, error: "malformed answer", detail: raw.subarray(0, 200).toString("latin1"), ms: performance.now() - t0 });
    };
    socket.on("end", end);
    socket.on("close", end);
    // A server that answers early and closes while the body is still being sent resets the
    // connection: whatever arrived before counts.
    socket.on("error", end);
    socket.write(bytes, () => {
      if (opts.halfClose) socket.end();
    });
  });
}

/**
 * Status, headers and body (decoded, if the server compressed it) of the final HTTP/1.1
 * answer, after any interim 1xx, or null while it is incomplete.
 */
function parseAnswer(raw: Buffer, needComplete: boolean): { status: number; headers: Record<string, string>; body: Buffer } | null {
  const a = parseMessage(raw, needComplete);
  if (!a) return null;
  const encoding = a.headers["content-encoding"]?.toLowerCase();
  try {
    if (encoding === "gzip") a.body = zlib.gunzipSync(a.body);
    else if (encoding === "br") a.body = zlib.brotliDecompressSync(a.body);
    else if (encoding === "deflate") a.body = zlib.inflateSync(a.body);
  } catch {
    // left as it came: the judgement sees bytes that are not what the headers say
  }
  return a;
}

function parseMessage(raw: Buffer, needComplete: boolean): { status: number; headers: Record<string, string>; body: Buffer } | null {
  const headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd < 0) return null;
  // An interim answer (100 Continue) precedes the real one.
  if (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 16).toString("latin1"))) return parseMessage(raw.subarray(headEnd + 4), needComplete);
  const lines = raw.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1]);
  if (!status) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const rest = raw.subarray(headEnd + 4);
  if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) {
    const body: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf("\r\n", at);
      if (lineEnd < 0) return needComplete ? null : { status, headers, body: Buffer.concat(body) };
      const size = parseInt(rest.subarray(at, lineEnd).toString("latin1"), 16);
      if (!Number.isFinite(size)) return needComplete ? null : { status, headers, body: Buffer.concat(body) };
      if (size === 0) return { status, headers, body: Buffer.concat(body) };
      if (rest.length < lineEnd + 2 + size + 2) return needComplete ? null : { status, headers, body: Buffer.concat(body) };
      body.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers["content-length"] === undefined ? undefined : Number(headers["content-length"]);
  if (length !== undefined) {
    if (rest.length < length) return needComplete ? null : { status, headers, body: rest };
    return { status, headers, body: rest.subarray(0, length) };
  }
  if ((status >= 100 && status < 200) || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
  return needComplete ? null : { status, headers, body: rest };
}
