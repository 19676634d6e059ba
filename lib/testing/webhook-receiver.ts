import http from "node:http";
import type { AddressInfo } from "node:net";

export type Received = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string; at: number };
/** How to answer: a status, a fuller answer, or `null` to never answer (the request hangs until `close`). */
export type Reply = number | { status: number; body?: string; delayMs?: number; headers?: Record<string, string> } | null;

/** Answers a subscription's handshake (a GET: its challenge echoed, CONTRACT §7) and anything else with `post`. */
export function handshakeThen(post: (r: Received) => Reply = () => 204): (r: Received) => Reply {
  return (r) => {
    if (r.method !== "GET") return post(r);
    const challenge = new URL(r.url, "http://x").searchParams.get("hub.challenge");
    return { status: 200, body: JSON.stringify({ "hub.challenge": challenge }), headers: { "content-type": "application/json" } };
  };
}

/** A webhook receiver on loopback that records every request and answers as told. */
export async function startReceiver(reply: (r: Received) => Reply = () => 200) {
  const requests: Received[] = [];
  const waiters = new Set<() => void>();
  let answer = reply;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: Received = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      requests.push(r);
      for (const w of waiters) w();
      const a = answer(r);
      if (a === null) return;
      const { status, body = "", delayMs = 0, headers = {} } = typeof a === "number" ? { status: a } : a;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(status, { "content-type": "text/plain", ...headers });
        res.end(body);
      };
      if (delayMs) setTimeout(send, delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    setReply(r: (r: Received) => Reply) {
      answer = r;
    },
    /** Resolves once `pred` holds over the requests so far (checked on every arrival). */
    waitFor(pred: (all: Received[]) => boolean, timeoutMs = 10_000): Promise<Received[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pred(requests)) return;
          waiters.delete(check);
          clearTimeout(t);
          resolve(requests);
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A loopback port with nothing listening on it: connections are refused. */
export async function refusedUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hook`;
}
