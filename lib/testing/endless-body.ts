import http from "node:http";

export type EndlessBodyResult = { status?: number; body?: string; closed: boolean; sent: number };

/**
 * Streams an endless chunked body (no Content-Length) to `url` until the server answers or
 * closes the connection; resolves with what happened and how much was sent. A server that read
 * bodies whole would never answer, and the sending would stop at `giveUpBytes`. The body is
 * `first` and then `chunkBytes` of `fill` at a time. With `contentLength`, the body declares
 * that length instead of being chunked (and `giveUpBytes` should be no more than it).
 */
export function sendEndlessBody(
  url: string,
  opts: { headers: Record<string, string>; giveUpBytes: number; first?: Buffer; fill?: number; chunkBytes?: number; contentLength?: number },
): Promise<EndlessBodyResult> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const req = http.request({
      host: target.hostname,
      port: target.port,
      path: target.pathname + target.search,
      method: "POST",
      headers: { ...opts.headers, ...(opts.contentLength === undefined ? { "transfer-encoding": "chunked" } : { "content-length": String(opts.contentLength) }) },
    });
    const chunk = Buffer.alloc(opts.chunkBytes ?? 64 * 1024, opts.fill ?? 0x20);
    let sent = 0;
    let done = false;
    const finish = (r: { status?: number; body?: string; closed: boolean }) => {
      if (done) return;
      done = true;
      resolve({ ...r, sent });
      req.destroy();
    };
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => finish({ status: res.statusCode, body, closed: false }));
      res.on("error", () => finish({ status: res.statusCode, body, closed: true }));
    });
    req.on("error", () => finish({ closed: true }));
    if (opts.first) {
      sent += opts.first.byteLength;
      req.write(opts.first);
    }
    const pump = () => {
      while (!done && sent < opts.giveUpBytes) {
        sent += chunk.byteLength;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!done) finish({ closed: false });
    };
    pump();
  });
}
