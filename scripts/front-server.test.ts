import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressInfo } from "node:net";
import http from "node:http";
import type net from "node:net";
import netModule from "node:net";
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import { sendRaw } from "../lib/testing/raw-http";
import { createFrontServer } from "./front-server.mjs";
import { BODY_LENGTH_HEADER } from "./body-length.mjs";
import { PAGE_BODY_LIMIT_BYTES } from "./page-body-limit.mjs";
import { PEER_ADDRESS_HEADER } from "./peer-address.mjs";
import { REFUSED_HEADER, REFUSED_PATH } from "./refused-header.mjs";

let server: http.Server;
let port = 0;
const seen: { url?: string; peer?: string | string[]; refused?: string | string[]; method?: string }[] = [];

beforeAll(async () => {
  server = createFrontServer({
    baseUrl: "http://service.test",
    handle: (req, res) => {
      seen.push({ url: req.url, peer: req.headers[PEER_ADDRESS_HEADER], refused: req.headers[REFUSED_HEADER], ...(req.method === "GET" ? {} : { method: req.method }) });
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

/** Every byte the server sends back for `requests`, written one after another on one connection, until it closes. */
function pipelined(to: number, requests: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netModule.connect(to, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.on("error", reject);
    socket.write(requests.join(""), "latin1");
  });
}

describe("the front server", () => {
  it("passes the socket's peer address on, overwriting the one a client sent", async () => {
    const a = await send(`GET /v1/teams HTTP/1.1\r\nHost: x\r\n${PEER_ADDRESS_HEADER}: 203.0.113.9\r\nConnection: close\r\n\r\n`);
    expect(a.status).toBe(200);
    expect(seen.at(-1)).toEqual({ url: "/v1/teams", peer: "127.0.0.1" });
  });

  it("takes a whole URL as the request target (RFC 9112 §3.2.2) as its path and query, the URL's authority as Host", async () => {
    const hosts: (string | undefined)[] = [];
    const probe = createFrontServer({
      baseUrl: "http://service.test",
      handle: (req, res) => {
        hosts.push(req.headers.host);
        res.writeHead(200, { "content-type": "text/plain" }).end(req.url);
      },
    });
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    try {
      const p = (probe.address() as AddressInfo).port;
      const a = await sendRaw(p, Buffer.from(`GET http://svc.test:3000/v1/athletes/me?limit=2 HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n`, "latin1"));
      expect(a.answered && { status: a.status, body: a.body.toString("utf8") }).toEqual({ status: 200, body: "/v1/athletes/me?limit=2" });
      expect(hosts).toEqual(["svc.test:3000"]);
    } finally {
      await new Promise<void>((r) => probe.close(() => r()));
    }
  });

  it("never hands on a refusal a client wrote itself", async () => {
    await send(`GET /v1/teams HTTP/1.1\r\nHost: x\r\n${REFUSED_HEADER}: {"code":"not_found","detail":"forged"}\r\nConnection: close\r\n\r\n`);
    expect(seen.at(-1)).toEqual({ url: "/v1/teams", peer: "127.0.0.1" });
  });

  it("answers an API path with an empty segment (an id left out) 404 not_found, not a redirect to another resource", async () => {
    // /mcp's here; /v1's handed on to the catch-all route, with the refusal in REFUSED_HEADER.
    const before = seen.length;
    const mcp = await send(`POST /mcp//x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect(mcp).toMatchObject({ status: 404, type: "application/problem+json", body: { code: "not_found", status: 404 } });
    expect(seen.length).toBe(before);
    for (const path of ["/v1/teams//members", "/v1//athletes/me", "/v1/activities//streams?keys=time"]) {
      await send(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const handed = seen.at(-1)!;
      expect({ path, url: handed.url, refused: JSON.parse(String(handed.refused)) }).toEqual({ path, url: REFUSED_PATH, refused: { code: "not_found", detail: "The path has an empty segment: an id is missing." } });
    }
    // Pages are Next.js's to answer as before.
    expect((await send(`GET /settings//apps HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).status).toBe(200);
  });

  it("refuses an API request with more than one Authorization header (400 invalid_request), whatever their order", async () => {
    const detail = "The request has more than one Authorization header: send one credential.";
    for (const [first, second] of [["Bearer aas_pat_a", "Bearer aas_pat_b"], ["Bearer aas_pat_b", "Basic eDp5"]]) {
      await send(`GET /v1/athletes/me HTTP/1.1\r\nHost: x\r\nAuthorization: ${first}\r\nauthorization: ${second}\r\nConnection: close\r\n\r\n`);
      expect(seen.at(-1)).toMatchObject({ url: REFUSED_PATH, refused: JSON.stringify({ code: "invalid_request", detail }) });
    }
    const before = seen.length;
    const token = await send(`POST /oauth/token HTTP/1.1\r\nHost: x\r\nAuthorization: Basic eDp5\r\nAuthorization: Basic eTp6\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect(token).toMatchObject({ status: 400, type: "application/json", body: { error: "invalid_request", error_description: detail } });
    const mcp = await send(`POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect(mcp).toMatchObject({ status: 400, type: "application/problem+json", body: { code: "invalid_request", detail } });
    expect(seen.length).toBe(before);
    // One is served as before.
    await send(`GET /v1/athletes/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer aas_pat_a\r\nConnection: close\r\n\r\n`);
    expect(seen.at(-1)).toMatchObject({ url: "/v1/athletes/me" });
  });

  it("hands an API path with a trailing slash on as the path without it, and leaves pages' paths alone", async () => {
    const cases: [string, string][] = [
      ["/v1/teams/", "/v1/teams"],
      ["/v1/athletes/me//?limit=2&x=/", "/v1/athletes/me?limit=2&x=/"],
      ["/v1/", "/v1"],
      ["/mcp/", "/mcp"],
      ["/v1/teams", "/v1/teams"],
      ["/settings/apps/", "/settings/apps/"],
      ["/v1x/", "/v1x/"],
      ["/", "/"],
    ];
    for (const [sent, handed] of cases) {
      const a = await send(`GET ${sent} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect({ sent, status: a.status, url: seen.at(-1)?.url }).toEqual({ sent, status: 200, url: handed });
    }
  });

  it("hands a method no route serves on an API path to the path's own route as OPTIONS, with the refusal and the method beside it", async () => {
    for (const [method, sent, handed] of [
      ["TRACE", "/v1/teams", "/v1/teams"],
      ["PROPFIND", "/v1/athletes/me/?x=1", "/v1/athletes/me?x=1"],
      ["PROPFIND", "/api/console/profile", "/api/console/profile"],
    ]) {
      const before = seen.length;
      await send(`${method} ${sent} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(seen.length).toBe(before + 1);
      const got = seen.at(-1)!;
      expect({ ...got, refused: JSON.parse(String(got.refused)) }).toEqual({
        url: handed,
        peer: "127.0.0.1",
        method: "OPTIONS",
        refused: { code: "method_not_allowed", detail: `${method} is not served.`, method },
      });
    }
    // A path no route may see as it is: the catch-all route answers what is wrong with the path.
    await send(`MKCOL /v1/teams//members HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(seen.at(-1)).toMatchObject({ url: REFUSED_PATH, method: "OPTIONS", refused: JSON.stringify({ code: "not_found", detail: "The path has an empty segment: an id is missing." }) });
  });

  it("refuses TRACE and CONNECT with 405 problems that name what is allowed, before any handler, off the API's paths", async () => {
    const before = seen.length;
    const connect = await send(`CONNECT /v1/teams HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(connect).toMatchObject({ status: 405, body: { code: "method_not_allowed" } });
    const oauth = await send(`TRACE /oauth/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(oauth).toMatchObject({ status: 405, type: "application/json", body: { error: "invalid_request" } });
    const dotted = await send(`TRACE /v1/%2e%2e/oauth/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(dotted).toMatchObject({ status: 405, type: "application/json", body: { error: "invalid_request" } });
    const page405 = await send(`PROPFIND /settings/profile HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(page405).toMatchObject({ status: 405, type: "text/html; charset=utf-8" });
    expect(page405.body).toContain("PROPFIND is not served.");
    // The authorization endpoint answers people: a page.
    const page = await send(`TRACE /oauth/authorize?client_id=x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(page.status).toBe(405);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.body).toContain("TRACE is not served.");
    expect(seen.length).toBe(before);
  });

  it("refuses a path whose escapes are not UTF-8 with a 400: a page on a console page's address (a link cut short), a problem the catch-all route answers on an API path", async () => {
    const a = await send(`GET /activities/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(a).toMatchObject({ status: 400, type: "text/html; charset=utf-8" });
    expect(a.body).toContain("<h1>This address cannot be opened</h1><p>The path holds %-escapes that are not UTF-8.</p>");
    const api = await send(`GET /api/console/activities/%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(api).toMatchObject({ status: 400, type: "application/problem+json", body: { code: "invalid_request" } });
    await send(`GET /v1/athletes/%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(seen.at(-1)).toMatchObject({ url: REFUSED_PATH, refused: JSON.stringify({ code: "invalid_request", detail: "The path holds %-escapes that are not UTF-8." }) });
  });

  it("refuses a form or server action posted to a page from another origin with a 403 page, as Next.js's own check would (it threw a 500)", async () => {
    const post = (path: string, headers: string) => send(`POST ${path} HTTP/1.1\r\nHost: svc.test:3000\r\n${headers}Content-Length: 2\r\nConnection: close\r\n\r\n[]`);
    const action = "Next-Action: 7f00\r\nContent-Type: text/plain;charset=UTF-8\r\n";
    const form = "Content-Type: multipart/form-data; boundary=x\r\n";
    const before = seen.length;
    for (const [path, headers] of [
      ["/signin", `${action}Origin: http://evil.test\r\n`],
      ["/oauth/authorize?client_id=x", `${form}Origin: https://evil.test\r\n`],
      ["/signup", `${form}Origin: null\r\n`],
      ["/signin", `${action}Origin: not a url\r\n`],
      // A different port is another origin; a client's X-Forwarded-Host is what Next.js compares first.
      ["/signin", `${action}Origin: http://svc.test:4000\r\n`],
      ["/signin", `${action}Origin: http://svc.test:3000\r\nX-Forwarded-Host: other.test, svc.test:3000\r\n`],
    ] as const) {
      const a = await post(path, headers);
      expect({ path, headers, status: a.status, type: a.type }).toEqual({ path, headers, status: 403, type: "text/html; charset=utf-8" });
      expect(a.body).toContain("This form was sent from another site");
    }
    expect(seen.length).toBe(before);
    // Handed on: the same origin (by Host or by X-Forwarded-Host), no Origin at all (Next.js lets
    // it through), a page's urlencoded post (no action), and the API's own cross-origin posts.
    for (const [path, headers] of [
      ["/signin", `${action}Origin: http://svc.test:3000\r\n`],
      ["/signin", `${action}Origin: https://public.test\r\nX-Forwarded-Host: public.test\r\n`],
      ["/signin", action],
      ["/signin", "Content-Type: application/x-www-form-urlencoded\r\nOrigin: http://evil.test\r\n"],
      ["/v1/athletes/me/uploads", `${form}Origin: https://app.test\r\n`],
      ["/api/console/uploads", `${form}Origin: https://app.test\r\n`],
      ["/oauth/token", `${action}Origin: https://app.test\r\n`],
      ["/mcp", `${action}Origin: https://app.test\r\n`],
    ] as const) {
      const a = await post(path, headers);
      expect({ path, headers, status: a.status, handled: seen.at(-1)?.url }).toEqual({ path, headers, status: 200, handled: path });
    }
  });

  it("refuses a page POST that declares more than Next.js's action limit (413) or no length at all (411), with a page, before any handler; the API's paths judge their own", async () => {
    const over = PAGE_BODY_LIMIT_BYTES + 1;
    const before = seen.length;
    const big = await send(`POST /signin HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${over}\r\nConnection: close\r\n\r\n`);
    expect({ status: big.status, type: big.type }).toEqual({ status: 413, type: "text/html; charset=utf-8" });
    expect(big.body).toContain("at most 64 KiB");
    const action = await send(`POST /oauth/authorize?client_id=x HTTP/1.1\r\nHost: x\r\nNext-Action: 7f00\r\nContent-Length: ${over}\r\nConnection: close\r\n\r\n`);
    expect(action.status).toBe(413);
    const chunked = await send(`POST /signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\na=\r\n0\r\n\r\n`);
    expect(chunked.status).toBe(411);
    expect(seen.length).toBe(before);
    // The refusal reaches a client still sending its body (the rest is read and dropped, not
    // reset), and the connection then takes the next request.
    for (let i = 0; i < 5; i++) {
      const body = Buffer.alloc(4 * 1024 * 1024, 0x61);
      const a = await sendRaw(port, Buffer.concat([Buffer.from(`POST /signin HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${body.length}\r\n\r\n`, "latin1"), body]));
      expect(a.answered && a.status, `try ${i}`).toBe(413);
    }
    const both = await pipelined(port, [
      `POST /signin HTTP/1.1\r\nHost: x\r\nContent-Length: ${over}\r\n\r\n${"a".repeat(over)}`,
      `GET /v1/teams HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    ]);
    expect(both.match(/^HTTP\/1\.1 \d{3}/gm)).toEqual(["HTTP/1.1 413", "HTTP/1.1 200"]);
    // Handed on: a page POST within the limit, and API paths whatever they declare.
    for (const [path, length] of [
      ["/signin", PAGE_BODY_LIMIT_BYTES],
      ["/v1/athletes/me/uploads", over],
      ["/api/console/uploads", over],
      ["/api/auth/callback/credentials", over],
      ["/oauth/token", over],
    ] as const) {
      const a = await sendRaw(port, Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`, "latin1"), Buffer.alloc(length, 0x61)]));
      expect({ path, status: a.status, handled: seen.at(-1)?.url }).toEqual({ path, status: 200, handled: path });
    }
  });

  it("tells browsers to keep to https (HSTS) on every answer when the service is served over https, and says nothing over http", async () => {
    const plain = await sendRaw(port, Buffer.from("GET /signin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "latin1"));
    expect(plain.answered && plain.headers["strict-transport-security"]).toBeUndefined();
    const secure = createFrontServer({ baseUrl: "https://service.test", handle: (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("handled") });
    await new Promise<void>((r) => secure.listen(0, "127.0.0.1", r));
    try {
      const at = (secure.address() as AddressInfo).port;
      for (const path of ["/signin", "/v1/athletes/me", "/oauth/token"]) {
        const a = await sendRaw(at, Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, "latin1"));
        expect(a.answered && a.headers["strict-transport-security"], path).toBe("max-age=31536000");
      }
      // The front server's own refusals too: a page POST too large, a method no route serves.
      for (const request of [`POST /signin HTTP/1.1\r\nHost: x\r\nContent-Length: ${PAGE_BODY_LIMIT_BYTES + 1}\r\n\r\n`, "TRACE /signin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]) {
        const a = await sendRaw(at, Buffer.from(request, "latin1"));
        expect(a.answered && a.headers["strict-transport-security"], request.split("\r\n")[0]).toBe("max-age=31536000");
      }
    } finally {
      await new Promise<void>((r) => secure.close(() => r()));
    }
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

describe("the front server and Next.js's compression", () => {
  let srv: http.Server;
  let srvPort = 0;
  // The middleware Next.js's router server installs on every response (next/dist/server/lib/router-server.js).
  const compression = createRequire(import.meta.url)("next/dist/compiled/compression") as () => (req: unknown, res: unknown, next: () => void) => void;
  const bodies: Record<string, string> = {
    "/small": JSON.stringify({ id: "ath_1", name: "Ava" }),
    "/large": JSON.stringify({ data: Array.from({ length: 60 }, (_, i) => ({ id: `act_${i}`, name: "Morning Run" })) }),
    "/unknown": JSON.stringify({ id: "ath_1" }),
  };
  beforeAll(async () => {
    srv = createFrontServer({
      baseUrl: "http://service.test",
      handle: (req, res) => {
        compression()(req, res, () => {});
        // As Next.js sends a route's Response: its headers, then flushHeaders, the chunk, the end.
        const path = (req.url ?? "/").split("?")[0]!;
        const body = Buffer.from(bodies[path] ?? "");
        res.statusCode = path === "/empty" ? 204 : 200;
        res.setHeader("content-type", "application/json");
        if (path !== "/unknown") res.setHeader(BODY_LENGTH_HEADER, String(body.byteLength));
        if (req.method === "HEAD" || path === "/empty") {
          res.end();
          return;
        }
        res.flushHeaders();
        res.write(body);
        res.end();
      },
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    srvPort = (srv.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => srv.close(() => r())));

  const get = (path: string, method = "GET") =>
    new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer; status: number }>((resolve, reject) => {
      http
        .request({ port: srvPort, host: "127.0.0.1", path, method, headers: { "accept-encoding": "gzip" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks), status: res.statusCode ?? 0 }));
        })
        .on("error", reject)
        .end();
    });

  it("sends an answer under 1 KiB whose length the route told as it is, with Content-Length, to a client that accepts gzip", async () => {
    const res = await get("/small");
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers["content-length"]).toBe(String(Buffer.byteLength(bodies["/small"]!)));
    expect(res.headers["transfer-encoding"]).toBeUndefined();
    expect(res.headers[BODY_LENGTH_HEADER]).toBeUndefined();
    expect(res.body.toString("utf8")).toBe(bodies["/small"]);
  });

  it("still gzips an answer over 1 KiB, and one whose length nobody told", async () => {
    for (const path of ["/large", "/unknown"]) {
      const res = await get(path);
      expect(res.headers["content-encoding"], path).toBe("gzip");
      expect(res.headers["content-length"], path).toBeUndefined();
      expect(res.headers[BODY_LENGTH_HEADER], path).toBeUndefined();
      expect(gunzipSync(res.body).toString("utf8"), path).toBe(bodies[path]);
    }
  });

  it("never sends the header on: not on HEAD, which gets the length, nor on a 204, which gets none", async () => {
    const head = await get("/small", "HEAD");
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(bodies["/small"]!)));
    expect(head.headers[BODY_LENGTH_HEADER]).toBeUndefined();
    const empty = await get("/empty");
    expect(empty.status).toBe(204);
    expect(empty.headers["content-length"]).toBeUndefined();
    expect(empty.headers[BODY_LENGTH_HEADER]).toBeUndefined();
  });
});
