import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressInfo } from "node:net";
import http from "node:http";
import type net from "node:net";
import { sendRaw } from "../lib/testing/raw-http";
import { createFrontServer } from "./front-server.mjs";
import { PEER_ADDRESS_HEADER } from "./peer-address.mjs";

let server: http.Server;
let port = 0;
const seen: { url?: string; peer?: string | string[] }[] = [];

beforeAll(async () => {
  server = createFrontServer({
    baseUrl: "http://service.test",
    handle: (req, res) => {
      seen.push({ url: req.url, peer: req.headers[PEER_ADDRESS_HEADER] });
      res.writeHead(200, { "content-type": "text/plain" }).end("handled");
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function send(text: string) {
  const a = await sendRaw(port, Buffer.from(text, "latin1"));
  if (!a.answered) throw new Error(`no answer: ${a.error}`);
  const type = a.headers["content-type"];
  const body = type?.includes("json") ? (JSON.parse(a.body.toString("utf8")) as Record<string, unknown>) : a.body.toString("utf8");
  return { status: a.status, type, allow: a.headers.allow, body };
}

describe("the front server", () => {
  it("passes the socket's peer address on, overwriting the one a client sent", async () => {
    const a = await send(`GET /v1/teams HTTP/1.1\r\nHost: x\r\n${PEER_ADDRESS_HEADER}: 203.0.113.9\r\nConnection: close\r\n\r\n`);
    expect(a.status).toBe(200);
    expect(seen.at(-1)).toEqual({ url: "/v1/teams", peer: "127.0.0.1" });
  });

  it("answers an API path with an empty segment (an id left out) 404 not_found, not a redirect to another resource", async () => {
    const before = seen.length;
    for (const path of ["/v1/teams//members", "/v1//athletes/me", "/v1/activities//streams?keys=time"]) {
      const a = await send(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect({ path, status: a.status, type: a.type, body: a.body }).toMatchObject({ path, status: 404, type: "application/problem+json", body: { code: "not_found", status: 404 } });
    }
    expect(seen.length).toBe(before);
    // Pages and a trailing slash are Next.js's to answer as before.
    expect((await send(`GET /settings//apps HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).status).toBe(200);
    expect((await send(`GET /v1/teams/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).status).toBe(200);
  });

  it("refuses TRACE and CONNECT with 405 problems that name what is allowed, before any handler", async () => {
    const before = seen.length;
    const trace = await send(`TRACE /v1/teams HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(trace).toMatchObject({ status: 405, type: "application/problem+json", body: { code: "method_not_allowed", status: 405, type: "http://service.test/problems/method_not_allowed" } });
    expect(trace.allow).toContain("GET");
    const connect = await send(`CONNECT /v1/teams HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(connect).toMatchObject({ status: 405, body: { code: "method_not_allowed" } });
    const oauth = await send(`TRACE /oauth/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(oauth).toMatchObject({ status: 405, type: "application/json", body: { error: "invalid_request" } });
    const dotted = await send(`TRACE /v1/%2e%2e/oauth/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(dotted).toMatchObject({ status: 405, type: "application/json", body: { error: "invalid_request" } });
    const webdav = await send(`PROPFIND /api/console/profile HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(webdav).toMatchObject({ status: 405, body: { code: "method_not_allowed" } });
    // The authorization endpoint answers people: a page.
    const page = await send(`TRACE /oauth/authorize?client_id=x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(page.status).toBe(405);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.body).toContain("TRACE is not served.");
    expect(seen.length).toBe(before);
  });

  it("refuses a path whose escapes are not UTF-8 with a 400 problem", async () => {
    const a = await send(`GET /v1/athletes/%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(a).toMatchObject({ status: 400, type: "application/problem+json", body: { code: "invalid_request" } });
  });

  it("answers what node:http cannot parse in the service's shapes, by the path of the request line", async () => {
    const badHeader = await send(`GET /v1/teams HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\nConnection: close\r\n\r\n`);
    expect(badHeader).toMatchObject({ status: 400, type: "application/problem+json", body: { code: "invalid_request" } });
    const huge = await send(`GET /v1/teams HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\nConnection: close\r\n\r\n`);
    expect(huge).toMatchObject({ status: 400, body: { code: "invalid_request", detail: expect.stringContaining("16 KB") } });
    const oauth = await send(`POST /oauth/token HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\nConnection: close\r\n\r\n`);
    expect(oauth).toMatchObject({ status: 400, type: "application/json", body: { error: "invalid_request" } });
  });
});

describe("the front server's answers", () => {
  // Next.js's route handlers answer as its pipeToNodeResponse does: the headers flushed just
  // before the first body chunk is written, then more chunks or the end.
  let next: http.Server;
  let nextPort = 0;
  /** Calls of the server sockets' _write and _writev: each is one write to the operating system. */
  let writes = 0;
  let clientGotFirstChunk: () => void = () => {};
  beforeAll(async () => {
    next = createFrontServer({
      baseUrl: "http://service.test",
      handle: async (req, res) => {
        res.statusCode = 200;
        res.setHeader("content-type", "text/plain");
        res.flushHeaders();
        res.write(Buffer.from("first;"));
        if (req.url === "/stream") {
          // A stream's first chunk must reach the client before the next is made.
          await new Promise<void>((r) => (clientGotFirstChunk = r));
          res.write(Buffer.from("second;"));
        }
        res.end();
      },
    });
    next.on("connection", (socket: net.Socket & { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void }) => {
      const write = socket._write.bind(socket);
      socket._write = (...a) => {
        writes++;
        write(...a);
      };
      const writev = socket._writev?.bind(socket);
      if (writev) {
        socket._writev = (...a) => {
          writes++;
          writev(...a);
        };
      }
    });
    await new Promise<void>((r) => next.listen(0, "127.0.0.1", r));
    nextPort = (next.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => next.close(() => r())));

  it("sends a one-chunk answer, its headers and its end in one write to the socket", async () => {
    const before = writes;
    const res = await fetch(`http://127.0.0.1:${nextPort}/one`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("first;");
    expect(writes - before).toBe(1);
  });

  it("does not hold a streamed answer back: each chunk leaves as it is written, in order", async () => {
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${nextPort}/stream`, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
            if (text === "first;") clientGotFirstChunk();
          });
          res.on("end", () => resolve(text));
          res.on("error", reject);
        })
        .on("error", reject);
    });
    expect(body).toBe("first;second;");
  });
});
