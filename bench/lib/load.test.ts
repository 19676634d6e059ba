import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { atRate } from "./load";

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe("atRate with a warm-up", () => {
  it("counts only the requests due after the warm-up, each timed from when it was due, so a queue the warm-up left still shows", async () => {
    // Every request that arrives in the first 1.2 s is held until 1.5 s after the first one:
    // a stall that begins in the warm-up (1 s) and outlasts it.
    let first = 0;
    let received = 0;
    const server = http.createServer((_req, res) => {
      received++;
      const now = performance.now();
      first ||= now;
      if (now - first < 1200) setTimeout(() => res.end("ok"), first + 1500 - now);
      else res.end("ok");
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

    const result = await atRate({ url }, { rps: 100, durationS: 1, warmupS: 1 });
    expect(received).toBe(200);
    expect(result.requests).toBe(100);
    // The counted requests due at 1.0–1.2 s were answered at 1.5 s at the earliest: at least 0.3 s
    // after they were due, and they are more than 1 % of those counted.
    expect(result.latencyMs.p99).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs.max).toBeGreaterThanOrEqual(490 - 10);
  });
});
