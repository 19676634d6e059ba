import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { resetEnvForTests } from "../env";
import { MAX_AUTH_BODY_BYTES, withBodyLimit } from "./body-limit";
import { sendEndlessBody } from "../testing/endless-body";

// A real server in front of the wrapper, handing it streamed requests as Next.js does; behind
// it, a handler that reads the body whole, as Auth.js does.
let url = "";
let server: http.Server;
const seen: { method: string; body: string; headers: Headers }[] = [];

const readsWhole = withBodyLimit(async (req: Request) => {
  const body = await req.text();
  seen.push({ method: req.method, body, headers: req.headers });
  return new Response(JSON.stringify({ bytes: Buffer.byteLength(body) }), { headers: { "content-type": "application/json" } });
});

beforeAll(async () => {
  server = http.createServer(async (req, res) => {
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : v ? [[k, v]] : [])) as [string, string][],
      // The Node request itself, as Next.js gives a route handler its body (lib/testing/server.ts).
      body: req.method === "POST" ? (req as unknown as BodyInit) : undefined,
      // @ts-expect-error Node's fetch needs this for streamed bodies
      duplex: "half",
    });
    const response = await readsWhole(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `${origin}/api/auth/callback/credentials`;
  process.env.BASE_URL = origin; // problem documents name it
  resetEnvForTests();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Sends an endless chunked form until the server answers or closes; how much was sent, and the answer. */
function endlessBody(giveUpBytes: number) {
  return sendEndlessBody(url, { headers: { "content-type": "application/x-www-form-urlencoded" }, giveUpBytes, fill: 0x61, chunkBytes: 16 * 1024 });
}

describe("withBodyLimit: Auth.js's POST bodies are bounded", () => {
  it("passes a sign-in form through as it came, streamed or with a length", async () => {
    const form = new URLSearchParams({ csrfToken: "t", email: "ava@example.com", password: "demo-password" }).toString();
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form });
    expect(res.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ method: "POST", body: form });
    expect(seen.at(-1)!.headers.get("content-type")).toBe("application/x-www-form-urlencoded");

    const streamed = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: Readable.toWeb(Readable.from([Buffer.from(form.slice(0, 10)), Buffer.from(form.slice(10))])) as ReadableStream,
      // @ts-expect-error Node's fetch needs this for streamed bodies
      duplex: "half",
    });
    expect(streamed.status).toBe(200);
    expect(seen.at(-1)!.body).toBe(form);
  });

  it("answers 413 payload_too_large to a declared length over the limit, without handing it on", async () => {
    const before = seen.length;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a".repeat(MAX_AUTH_BODY_BYTES + 1),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "payload_too_large" });
    expect(seen.length).toBe(before);
  });

  it("stops reading an endless chunked body at the limit and answers 413", async () => {
    const before = seen.length;
    const giveUp = 64 * 1024 * 1024;
    const result = await endlessBody(giveUp);
    // 64 KiB read, at most 8 MiB more taken while the answer goes out, and what the sockets' buffers hold.
    expect(result.sent, "the server kept reading").toBeLessThan(24 * 1024 * 1024);
    expect(result).toMatchObject({ closed: false, status: 413 });
    expect(JSON.parse(result.body!)).toMatchObject({ code: "payload_too_large" });
    expect(seen.length).toBe(before);
  });
});
