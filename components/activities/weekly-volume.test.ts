import { describe, expect, it } from "vitest";
import { labelledOnPhone, sportsByTime, weekBars } from "./weekly-volume";

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
