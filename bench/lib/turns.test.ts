import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { CpuMeter, type CpuUse } from "./cpu";
import { averageCpu, combine, throughputInTurns } from "./turns";

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server that notes when each request arrived. */
async function recorder(): Promise<{ url: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  const server = http.createServer((_req, res) => {
    arrivals.push(performance.now());
    res.end("ok");
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, arrivals };
}

/** Runs of consecutive arrivals at the same server, in time order. */
function runs(a: number[], b: number[]): { who: "a" | "b"; from: number; to: number; count: number }[] {
  const all = [...a.map((t) => ({ t, who: "a" as const })), ...b.map((t) => ({ t, who: "b" as const }))].sort((x, y) => x.t - y.t);
  const out: { who: "a" | "b"; from: number; to: number; count: number }[] = [];
  for (const { t, who } of all) {
    const last = out.at(-1);
    if (last?.who === who) {
      last.to = t;
      last.count++;
    } else out.push({ who, from: t, to: t, count: 1 });
  }
  return out;
}

describe("throughputInTurns", () => {
  it("gives each target its time in alternating turns, each going first in turn, and adds up each target's turns", async () => {
    const a = await recorder();
    const b = await recorder();
    const meter = new CpuMeter(undefined, 0);
    const seen: string[] = [];
    const rounds = await throughputInTurns(
      meter,
      () => {},
      { a: { url: a.url }, b: { url: b.url } },
      { connections: 2, durationS: 4, turnS: 1, rounds: 1 },
      (round, key, result) => seen.push(`${round}:${key}:${result.turns.length}`),
    );
    expect(seen).toEqual(["1:a:4", "1:b:4"]);
    // Four turns each, and the order rotates: a b | b a | a b | b a, so the middle turns of a
    // pair meet (b b, a a) and the servers see a, b, a, b, a in runs.
    const order = runs(a.arrivals, b.arrivals).map((r) => r.who);
    expect(order).toEqual(["a", "b", "a", "b", "a"]);
    for (const [key, server] of [["a", a], ["b", b]] as const) {
      const r = rounds[key][0]!;
      expect(r.turns).toHaveLength(4);
      // What the server received, less at most the requests in flight when each turn ended.
      expect(r.requests).toBeLessThanOrEqual(server.arrivals.length);
      expect(r.requests).toBeGreaterThanOrEqual(server.arrivals.length - 2 * 4);
      expect(r.durationS).toBeGreaterThanOrEqual(3.9);
      expect(r.rps).toBeCloseTo(r.requests / r.durationS, 6);
    }
  });
});

describe("combine", () => {
  it("takes requests over time, the median p50 and the worst p99 of the turns", () => {
    const turn = (requests: number, durationS: number, p50: number, p99: number) => ({
      rps: requests / durationS,
      requests,
      durationS,
      connections: 4,
      latencyMs: { p50, p99 },
    });
    const r = combine([turn(100, 1, 3, 9), turn(300, 1, 1, 30), turn(200, 2, 2, 12)]);
    expect(r.requests).toBe(600);
    expect(r.durationS).toBe(4);
    expect(r.rps).toBe(150);
    expect(r.latencyMs).toEqual({ p50: 2, p99: 30 });
    expect(r.turns).toEqual([100, 300, 100]);
  });
});

describe("averageCpu", () => {
  const use = (service: number, others: number): CpuUse => ({
    busyCores: service + others,
    oursCores: service,
    othersCores: others,
    parts: { service },
  });
  it("weights each window by its length and keeps the most other processes took in any", () => {
    const avg = averageCpu([
      { cpu: use(1, 0.1), durationS: 3 },
      { cpu: use(2, 0.5), durationS: 1 },
    ]);
    expect(avg).toEqual({ busyCores: 1.45, oursCores: 1.25, othersCores: 0.5, parts: { service: 1.25 } });
  });
  it("is unknown when a window's use is", () => {
    expect(averageCpu([{ cpu: use(1, 0), durationS: 1 }, { durationS: 1 }])).toBeUndefined();
  });
});
