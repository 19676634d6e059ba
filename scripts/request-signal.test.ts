import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { serverNodeOptions } from "./serve.mjs";

// The preload changes a global, so each case runs in its own Node process started the way
// scripts/serve.mjs starts a server (with `serverNodeOptions()`), or without them for contrast.
const nextRequestModule = createRequire(import.meta.url).resolve("next/dist/server/web/spec-extension/request.js");

function run(script: string, { preload = true } = {}): Record<string, unknown> {
  const out = execFileSync(process.execPath, [...(preload ? serverNodeOptions({}) : []), "--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return JSON.parse(out) as Record<string, unknown>;
}

// How Next.js makes a route handler's request (adapters/next-request.ts), then what a handler
// and the platform can observe of it.
const nextLikeRequest = `
  import { createRequire } from "node:module";
  import { getEventListeners } from "node:events";
  const { NextRequest } = createRequire(import.meta.url)(${JSON.stringify(nextRequestModule)});
  const client = new AbortController();
  const request = new NextRequest(new URL("http://127.0.0.1/v1/athletes/me?x=1"), {
    method: "POST", headers: { authorization: "Bearer t" }, duplex: "half", body: "{\\"a\\":1}", signal: client.signal,
  });
  const result = {
    isRequest: request instanceof Request,
    isNextRequest: request instanceof NextRequest,
    method: request.method,
    auth: request.headers.get("authorization"),
    query: request.nextUrl.searchParams.get("x"),
    body: await request.json(),
    followers: getEventListeners(client.signal, "abort").length,
    abortedBefore: request.signal.aborted,
  };
  client.abort(new Error("client went away"));
  result.abortedAfter = request.signal.aborted;
  result.reason = request.signal.reason?.message;
  console.log(JSON.stringify(result));
`;

describe("scripts/request-signal.mjs, preloaded into every server process", () => {
  it("keeps the signal Next.js passes as the request's own: it aborts when the client leaves, and nothing follows it", () => {
    const r = run(nextLikeRequest);
    expect(r).toEqual({
      isRequest: true,
      isNextRequest: true,
      method: "POST",
      auth: "Bearer t",
      query: "1",
      body: { a: 1 },
      // Node's own Request registers a listener (and a FinalizationRegistry entry) per request.
      followers: 0,
      abortedBefore: false,
      abortedAfter: true,
      reason: "client went away",
    });
  });

  it("is what makes the difference: without it, the platform follows the signal with a listener of its own", () => {
    expect(run(nextLikeRequest, { preload: false })).toMatchObject({ followers: 1, abortedAfter: true, reason: "client went away" });
  });

  it("leaves every other Request as the platform makes it", () => {
    const r = run(`
      const plain = new Request("http://x/", { method: "PUT", body: "b" });
      const aborted = new Request("http://x/", { signal: AbortSignal.abort(new Error("early")) });
      let rejected = null;
      try { new Request("http://x/", { signal: "not a signal" }); } catch (e) { rejected = e.constructor.name; }
      const clone = plain.clone() instanceof Request;
      console.log(JSON.stringify({
        plainSignal: plain.signal instanceof AbortSignal && !plain.signal.aborted,
        plainBody: await plain.text(),
        abortedReason: aborted.signal.aborted && aborted.signal.reason.message,
        rejected,
        clone,
        name: Request.name,
        fetched: await fetch(new Request("data:text/plain,hi", { signal: new AbortController().signal })).then((r) => r.text()),
      }));
    `);
    expect(r).toEqual({ plainSignal: true, plainBody: "b", abortedReason: "early", rejected: "TypeError", clone: true, name: "Request", fetched: "hi" });
  });
});
