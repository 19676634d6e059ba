import { describe, expect, it, vi } from "vitest";
import { gzipSync } from "node:zlib";
import { readBodyUpTo, readJsonBody } from "./body";
import { isDatabaseUnavailable } from "./db-errors";
import { errorToResponse } from "./api-route";
import { ApiError } from "./errors";
import { log } from "../log";

/** A request whose client closed the connection after part of its body, as Node.js reports it. */
function cutRequest(): Request {
  const aborted = Object.assign(new Error("aborted"), { code: "ECONNRESET" });
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(aborted);
      sent = true;
      controller.enqueue(new TextEncoder().encode('{"name":"Morning'));
    },
  });
  return new Request("http://127.0.0.1/v1/athletes/me/activities", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": "100" },
    body,
    duplex: "half",
  } as RequestInit);
}

describe("a body the client stopped sending", () => {
  it("is read as cut short, naming why", async () => {
    const read = await readBodyUpTo(cutRequest(), 1024);
    expect(read).toEqual({ tooLarge: false, cut: true, detail: "The request body ended before it was whole (aborted)." });
  });

  it("is the client's 400, never taken for an unreachable database (whose errors carry the same ECONNRESET)", async () => {
    const err = await readJsonBody(cutRequest()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(isDatabaseUnavailable(err)).toBe(false);
    const warned = vi.spyOn(log, "warn");
    try {
      const res = errorToResponse(err, cutRequest(), "trace");
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: "invalid_request", errors: [{ field: "body", detail: expect.stringContaining("ended before it was whole") }] });
      expect(warned).not.toHaveBeenCalled();
    } finally {
      warned.mockRestore();
    }
  });
});

describe("a compressed JSON body", () => {
  const request = (encoding: string, body: Uint8Array<ArrayBuffer>) =>
    new Request("http://127.0.0.1/v1/athletes/me/activities", { method: "POST", headers: { "content-type": "application/json", "content-encoding": encoding }, body });

  it("is refused as compressed, not reported as text that is not UTF-8", async () => {
    const err = await readJsonBody(request("gzip", new Uint8Array(gzipSync('{"name":"Morning run"}')))).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe("The request body must not be compressed (Content-Encoding: gzip): send the JSON as it is.");
  });

  it("is read when its encoding is identity", async () => {
    expect(await readJsonBody(request("identity", new TextEncoder().encode('{"name":"Morning run"}')))).toEqual({ name: "Morning run" });
  });
});
