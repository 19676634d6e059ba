import { afterAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApiError } from "../http/errors";
import { HANDSHAKE_EXCERPT_CHARS, handshakeUrl, printableExcerpt, runHandshake, verifyEndpoint } from "./handshake";

type Seen = { url: URL; method: string; headers: http.IncomingHttpHeaders };

const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A real receiver on loopback; `answer` decides what it does with each request. */
async function receiver(answer: (seen: Seen, res: http.ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const s = { url: new URL(req.url!, "http://127.0.0.1"), method: req.method!, headers: req.headers };
    seen.push(s);
    answer(s, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, seen };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const echo = (s: Seen, res: http.ServerResponse) => json(res, 200, { "hub.challenge": s.url.searchParams.get("hub.challenge") });

describe("the verification handshake (SPEC §4.4, CONTRACT §7)", () => {
  it("GETs the URL with hub.mode=subscribe, a random challenge and the verify token, and completes on 200 with the challenge echoed", async () => {
    const r = await receiver(echo);
    const report = await runHandshake(r.url, { verifyToken: "my-token", allowPrivate: true });
    expect(report).toMatchObject({ outcome: "verified", status: 200, error: null });
    expect(r.seen).toHaveLength(1);
    const [s] = r.seen;
    expect(s!.method).toBe("GET");
    expect(s!.url.pathname).toBe("/hooks");
    expect(s!.url.searchParams.get("hub.mode")).toBe("subscribe");
    expect(s!.url.searchParams.get("hub.verify_token")).toBe("my-token");
    expect(s!.url.searchParams.get("hub.challenge")).toMatch(/^[0-9A-Za-z]{32}$/);

    await runHandshake(r.url, { verifyToken: "my-token", allowPrivate: true });
    expect(r.seen[1]!.url.searchParams.get("hub.challenge")).not.toBe(s!.url.searchParams.get("hub.challenge"));
  });

  it("keeps the URL's own query parameters", () => {
    const u = new URL(handshakeUrl("https://hooks.example.com/in?app=7&x=a%20b", "c", "t"));
    expect(u.search).toBe("?app=7&x=a%20b&hub.mode=subscribe&hub.challenge=c&hub.verify_token=t");
  });

  it("accepts other members beside hub.challenge", async () => {
    const r = await receiver((s, res) => json(res, 200, { ok: true, "hub.challenge": s.url.searchParams.get("hub.challenge") }));
    expect((await runHandshake(r.url, { verifyToken: "t", allowPrivate: true })).outcome).toBe("verified");
  });

  it("fails on a wrong challenge", async () => {
    const r = await receiver((_s, res) => json(res, 200, { "hub.challenge": "something-else" }));
    const report = await runHandshake(r.url, { verifyToken: "t", allowPrivate: true });
    expect(report).toMatchObject({ outcome: "wrong_challenge", status: 200, body_excerpt: '{"hub.challenge":"something-else"}' });
  });

  it("reads JSON that begins with a byte order mark, as some frameworks write UTF-8", async () => {
    const r = await receiver((s, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ "hub.challenge": s.url.searchParams.get("hub.challenge") }))]));
    });
    expect((await runHandshake(r.url, { verifyToken: "t", allowPrivate: true })).outcome).toBe("verified");
  });

  it("fails on a challenge that is not a JSON string member (a number, or nested)", async () => {
    const r = await receiver((s, res) => json(res, 200, { hub: { challenge: s.url.searchParams.get("hub.challenge") } }));
    expect((await runHandshake(r.url, { verifyToken: "t", allowPrivate: true })).outcome).toBe("wrong_challenge");
  });

  it("fails on any status but 200, even another 2xx, and reports the body", async () => {
    const r404 = await receiver((_s, res) => json(res, 404, { error: "no such hook" }));
    expect(await runHandshake(r404.url, { verifyToken: "t", allowPrivate: true })).toMatchObject({
      outcome: "unexpected_status",
      status: 404,
      body_excerpt: '{"error":"no such hook"}',
      error: null,
    });
    const r204 = await receiver((_s, res) => res.writeHead(204).end());
    expect(await runHandshake(r204.url, { verifyToken: "t", allowPrivate: true })).toMatchObject({ outcome: "unexpected_status", status: 204 });
  });

  it("fails on a 200 whose body is not JSON (the challenge echoed as plain text included)", async () => {
    const r = await receiver((s, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(s.url.searchParams.get("hub.challenge")!);
    });
    const report = await runHandshake(r.url, { verifyToken: "t", allowPrivate: true });
    expect(report.outcome).toBe("not_json");
    expect(report.status).toBe(200);
  });

  it("does not follow a redirect", async () => {
    const target = await receiver(echo);
    const r = await receiver((s, res) => res.writeHead(302, { location: `${target.url}${s.url.search}` }).end());
    expect(await runHandshake(r.url, { verifyToken: "t", allowPrivate: true })).toMatchObject({ outcome: "unexpected_status", status: 302 });
    expect(target.seen).toHaveLength(0);
  });

  it("gives up after the timeout: not_sent, timeout", async () => {
    const r = await receiver(() => {
      // never answers
    });
    const report = await runHandshake(r.url, { verifyToken: "t", allowPrivate: true, timeoutMs: 300 });
    expect(report).toMatchObject({ outcome: "not_sent", status: null, body_excerpt: null, error: "timeout" });
    expect(report.duration_ms).toBeGreaterThanOrEqual(250);
    expect(report.duration_ms).toBeLessThan(3000);
  });

  it("reports a 200 whose body stops before its end as body_incomplete, with the status and what arrived", async () => {
    const r = await receiver((_s, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"hub.challenge":"ab');
      // and never ends it
    });
    const report = await runHandshake(r.url, { verifyToken: "t", allowPrivate: true, timeoutMs: 300 });
    expect(report).toMatchObject({ outcome: "body_incomplete", status: 200, content_type: "application/json", body_excerpt: '{"hub.challenge":"ab', error: "timeout" });
    const refused = (await verifyEndpoint(r.url, { allowPrivate: true, timeoutMs: 300 }).catch((e: unknown) => e)) as ApiError;
    expect(refused.message).toBe(
      'The verification handshake did not complete. The endpoint answered 200, but its body stopped before its end (it did not finish within 0.3 s), after \u201c{"hub.challenge":"ab\u201d (application/json).',
    );
  });

  it("reports a refused connection: not_sent, connection_refused", async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    expect(await runHandshake(`http://127.0.0.1:${port}/hooks`, { verifyToken: "t", allowPrivate: true })).toMatchObject({
      outcome: "not_sent",
      error: "connection_refused",
    });
  });

  it("refuses loopback and private addresses unless allowed, for IP literals and names alike, without connecting", async () => {
    const r = await receiver(echo);
    const port = new URL(r.url).port;
    expect(await runHandshake(r.url, { verifyToken: "t", allowPrivate: false })).toMatchObject({ outcome: "not_sent", error: "blocked_address" });
    expect(await runHandshake(`https://localhost:${port}/hooks`, { verifyToken: "t", allowPrivate: false })).toMatchObject({
      outcome: "not_sent",
      error: "blocked_address",
    });
    expect(r.seen).toHaveLength(0);
  });
});

describe("what a handshake report shows of the answer (issue 9: no more than a receiver needs to debug it)", () => {
  // What an internal service might answer: a long body whose later part must never be shown.
  const leaky = "<title>Internal admin</title>\u0000\u001b[31m\u202e\r\n" + "a".repeat(250) + "SECRET-AFTER-250" + "b".repeat(3500);

  it("reports the status, the media type and at most 200 printable characters of the body", async () => {
    const r = await receiver((_s, res) => {
      res.writeHead(500, { "content-type": "text/html; charset=utf-8" });
      res.end(leaky);
    });
    const report = await runHandshake(r.url, { verifyToken: "t", allowPrivate: true });
    expect(report).toMatchObject({ outcome: "unexpected_status", status: 500, content_type: "text/html", error: null });
    expect(Array.from(report.body_excerpt!).length).toBeLessThanOrEqual(HANDSHAKE_EXCERPT_CHARS);
    expect(report.body_excerpt).toMatch(/^<title>Internal admin<\/title> \[31m a+…$/);
    expect(JSON.stringify(report)).not.toContain("SECRET");
  });

  it("checks the challenge against the whole answer read, but shows only its start", async () => {
    const r = await receiver((s, res) => json(res, 200, { padding: "p".repeat(1000), "hub.challenge": s.url.searchParams.get("hub.challenge") }));
    const ok = await runHandshake(r.url, { verifyToken: "t", allowPrivate: true });
    expect(ok.outcome).toBe("verified");
    const wrong = await receiver((_s, res) => json(res, 200, { padding: "p".repeat(1000), "hub.challenge": "SECRET-FAR-IN" }));
    const report = await runHandshake(wrong.url, { verifyToken: "t", allowPrivate: true });
    expect(report).toMatchObject({ outcome: "wrong_challenge", status: 200, content_type: "application/json" });
    expect(Array.from(report.body_excerpt!).length).toBeLessThanOrEqual(HANDSHAKE_EXCERPT_CHARS);
    expect(JSON.stringify(report)).not.toContain("SECRET");
  });

  it("quotes no more than the report in the 400 problem's detail", async () => {
    const r = await receiver((_s, res) => {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(leaky);
    });
    const err = (await verifyEndpoint(r.url, { allowPrivate: true }).catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("webhook_verification_failed");
    expect(err.message).toContain("answered 404 instead of 200");
    expect(err.message).toContain("(text/plain)");
    // In quotes a page shows as quotes, not Markdown's backticks.
    expect(err.message).toMatch(/with \u201c[^\u201d`]+\u201d \(text\/plain\)/);
    expect(err.message.length).toBeLessThan(400);
    expect(err.message).not.toMatch(/SECRET|[\u0000-\u001f\u202e]/);
    expect(JSON.stringify(err.extensions)).not.toContain("SECRET");
  });

  it("printableExcerpt keeps short text as it is and cuts long text within the limit", () => {
    expect(printableExcerpt('{"error":"no such hook"}')).toBe('{"error":"no such hook"}');
    expect(printableExcerpt("  two\n\n lines\t ")).toBe("two lines");
    expect(printableExcerpt("\u200b\u0007")).toBe("");
    const cut = printableExcerpt("é".repeat(500), 10);
    expect(cut).toBe(`${"é".repeat(9)}…`);
    expect(Array.from(printableExcerpt("😀".repeat(300))).length).toBe(HANDSHAKE_EXCERPT_CHARS);
  });
});

describe("verifyEndpoint", () => {
  it("returns the report when the handshake completes, generating a verify token when none is given", async () => {
    const r = await receiver(echo);
    expect((await verifyEndpoint(r.url, { allowPrivate: true })).outcome).toBe("verified");
    expect(r.seen[0]!.url.searchParams.get("hub.verify_token")).toMatch(/^[0-9A-Za-z]{24}$/);
  });

  it("throws 400 webhook_verification_failed with what the endpoint did in detail and in the handshake member", async () => {
    const r = await receiver((_s, res) => json(res, 500, { oops: 1 }));
    const err = (await verifyEndpoint(r.url, { allowPrivate: true }).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe("webhook_verification_failed");
    expect(err.status).toBe(400);
    expect(err.message).toContain("answered 500 instead of 200");
    expect(err.message).toContain('{"oops":1}');
    expect(err.extensions).toEqual({ handshake: expect.objectContaining({ outcome: "unexpected_status", status: 500, body_excerpt: '{"oops":1}' }) });

    const slow = await receiver(() => {});
    const timeout = (await verifyEndpoint(slow.url, { allowPrivate: true, timeoutMs: 200 }).catch((e: unknown) => e)) as ApiError;
    expect(timeout.message).toContain("did not answer within 0.2 s");
  });
});
