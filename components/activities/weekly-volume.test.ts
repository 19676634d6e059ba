import { describe, expect, it } from "vitest";
import { distanceTicks, labelledOnPhone, sportsByTime, weekBars } from "./weekly-volume";

describe("the weekly volume chart's bars", () => {
  const summary = {
    periods: [
      { start: "2026-09-07", sport_type: "run" as const, count: 1, distance_m: 5000, moving_time_s: 1500, elevation_gain_m: 0 },
      { start: "2026-11-09", sport_type: "ride" as const, count: 2, distance_m: 60000, moving_time_s: 7200, elevation_gain_m: 300 },
      { start: "2026-11-16", sport_type: "run" as const, count: 3, distance_m: 30000, moving_time_s: 9000, elevation_gain_m: 120 },
      { start: "2026-11-16", sport_type: "swim" as const, count: 1, distance_m: 2000, moving_time_s: 2400, elevation_gain_m: 0 },
    ],
  };

  it("gives twelve Monday-started weeks ending with today's, empty ones included, oldest first", () => {
    // 2026-11-19 is a Thursday: its week starts on Monday the 16th.
    const bars = weekBars(summary, "2026-11-19");
    expect(bars).toHaveLength(12);
    expect(bars[11]!.start).toBe("2026-11-16");
    expect(bars[0]!.start).toBe("2026-08-31");
    expect(bars[11]).toMatchObject({ total_m: 32000, total_s: 11400 });
    expect(bars[10]).toMatchObject({ start: "2026-11-09", total_m: 60000 });
    expect(bars[1]).toMatchObject({ start: "2026-09-07", total_m: 5000 });
    expect(bars.filter((b) => b.sports.length === 0)).toHaveLength(9);
  });

  it("counts a Sunday in the week that began the Monday before, and leaves out periods outside the weeks shown", () => {
    const bars = weekBars(summary, "2026-11-22");
    expect(bars[11]!.start).toBe("2026-11-16");
    expect(weekBars(summary, "2026-12-31").flatMap((b) => b.sports)).toHaveLength(3);
  });

  it("orders sports by their time in these weeks", () => {
    expect(sportsByTime(weekBars(summary, "2026-11-19"))).toEqual(["run", "ride", "swim"]);
  });
});

describe("the weekly volume chart's dates on a phone", () => {
  it("labels every third week, the current one included, so twelve dates do not crowd a narrow screen", () => {
    const shown = Array.from({ length: 12 }, (_, i) => i).filter((i) => labelledOnPhone(i, 12));
    expect(shown).toEqual([2, 5, 8, 11]);
  });
});

describe("the weekly volume chart's distance axis", () => {
  it.each([
    [42.3, [0, 20, 40, 60]],
    [40, [0, 10, 20, 30, 40]],
    [7.5, [0, 2, 4, 6, 8]],
    [0.35, [0, 0.1, 0.2, 0.3, 0.4]],
    [130, [0, 50, 100, 150]],
    [1, [0, 0.5, 1]],
  ])("for a longest week of %s, reads %j", (max, ticks) => {
    expect(distanceTicks(max)).toEqual(ticks);
  });

  it("has a top line at or above the longest week, at most five lines, evenly spaced, for any distance", () => {
    for (let max = 0.01; max < 5000; max *= 1.37) {
      const ticks = distanceTicks(max);
      expect(ticks[0]).toBe(0);
      expect(ticks.at(-1)!).toBeGreaterThanOrEqual(max);
      expect(ticks.length).toBeLessThanOrEqual(5);
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      const step = ticks[1]! - ticks[0]!;
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBeCloseTo(step, 9);
      // Not a scale whose top is more than twice the longest week.
      expect(ticks.at(-2)!).toBeLessThan(max);
    }
  });

  it("draws an empty chart's axis to 1", () => {
    expect(distanceTicks(0)).toEqual([0, 1]);
  });
});
