import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_SCHEDULE_S, MAX_ATTEMPTS, retryDelayS } from "./policy";

describe("delivery policy: the retry schedule (CONTRACT §7)", () => {
  const exact = () => 0.5; // jitter factor exactly 1

  it("follows 10 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h, then every 12 h", () => {
    const waits = Array.from({ length: 12 }, (_, i) => retryDelayS(i + 1, DEFAULT_RETRY_SCHEDULE_S, exact));
    expect(waits).toEqual([10, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200, 43_200, 43_200]);
  });

  it("jitters by at most ±20 %", () => {
    expect(retryDelayS(2, DEFAULT_RETRY_SCHEDULE_S, () => 0)).toBeCloseTo(48);
    expect(retryDelayS(2, DEFAULT_RETRY_SCHEDULE_S, () => 0.999999)).toBeCloseTo(72, 3);
  });

  it("stops after the 20th attempt", () => {
    expect(retryDelayS(MAX_ATTEMPTS - 1, DEFAULT_RETRY_SCHEDULE_S, exact)).toBe(43_200);
    expect(retryDelayS(MAX_ATTEMPTS, DEFAULT_RETRY_SCHEDULE_S, exact)).toBeNull();
  });

  it("takes a replacement schedule (WEBHOOK_RETRY_SCHEDULE_S), repeating its last step", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayS(n, [0.1, 0.2], exact))).toEqual([0.1, 0.2, 0.2, 0.2]);
  });
});
