import { describe, expect, it } from "vitest";
import { niceMax, shortDay, usageSummary } from "./usage-chart";

describe("niceMax", () => {
  it("is a round ceiling close above the highest bar, with a whole-number midpoint", () => {
    expect(niceMax(0)).toBe(4);
    expect(niceMax(3)).toBe(4);
    expect(niceMax(5)).toBe(6);
    expect(niceMax(9)).toBe(10);
    expect(niceMax(10)).toBe(10);
    expect(niceMax(11)).toBe(12);
    expect(niceMax(1050)).toBe(1200);
    expect(niceMax(30_000)).toBe(30_000);
    for (const n of [7, 13, 99, 101, 777, 4321, 29_999]) {
      const top = niceMax(n);
      expect(top).toBeGreaterThanOrEqual(n);
      expect(top).toBeLessThan(n * 1.6);
      expect(top % 2).toBe(0);
    }
  });
});

describe("usageSummary", () => {
  it("counts requests in words that agree with the number", () => {
    expect(usageSummary([])).toBe("0 requests in total.");
    expect(usageSummary([{ date: "2026-11-30", requests: 0 }])).toBe("0 requests in total.");
    expect(usageSummary([{ date: "2026-11-29", requests: 0 }, { date: "2026-11-30", requests: 1 }])).toBe(
      `1 request in total; the busiest day was ${shortDay("2026-11-30")} with 1 request.`,
    );
    expect(usageSummary([{ date: "2026-11-29", requests: 1200 }, { date: "2026-11-30", requests: 3 }])).toBe(
      `1,203 requests in total; the busiest day was ${shortDay("2026-11-29")} with 1,200 requests.`,
    );
  });
});
