import { describe, expect, it } from "vitest";
import {
  buildChartData,
  distanceReading,
  distanceUnit,
  chartRange,
  cursorStops,
  formatX,
  isolatedPoints,
  moveCursor,
  pauseThreshold,
  readoutAt,
  robustRange,
  smooth,
  speedOf,
  speedReading,
  summarize,
} from "./chart-series";
import type { StreamsWire } from "./files-api";

const run: StreamsWire["streams"] = {
  time_s: [0, 10, 20, 30, 40],
  distance_m: [0, 30, 60, null, 120],
  speed_mps: [3, 3, 3, 3, 3],
  heart_rate_hz: [2, 2.5, null, 2.5, 3],
  altitude_m: [10, 11, 12, 13, 14],
};

describe("buildChartData", () => {
  it("charts a run's pace in min/km, heart rate in bpm and elevation, against distance, leaving out samples without one", () => {
    const d = buildChartData(run, "run", "metric", "distance");
    expect(d.xMode).toBe("distance");
    expect(d.x).toEqual([0, 0.03, 0.06, 0.12]);
    expect(d.channels.map((c) => c.key)).toEqual(["pace", "heart_rate", "elevation"]);
    const pace = d.channels[0]!;
    expect(pace.values).toEqual([1000 / 3, 1000 / 3, 1000 / 3, 1000 / 3]);
    expect(pace.inverted).toBe(true);
    expect(pace.format(1000 / 3)).toBe("5:33 /km");
    expect(d.channels[1]!.values).toEqual([120, 150, null, 180]);
  });

  it("charts a ride's speed in mph and elevation in feet for imperial units, against time", () => {
    const d = buildChartData({ ...run, power_w: [200, 210, null, 190, 250] }, "ride", "imperial", "time");
    expect(d.x).toEqual([0, 10, 20, 30, 40]);
    const keys = d.channels.map((c) => c.key);
    expect(keys).toEqual(["speed", "heart_rate", "power", "elevation"]);
    expect(d.channels[0]!.values[0]).toBeCloseTo(6.71, 2);
    expect(d.channels[0]!.format(6.71)).toBe("6.7 mph");
    expect(d.channels[3]!.values[0]).toBeCloseTo(32.8, 1);
  });

  it("falls back to time when there is no distance, and shows only the channels recorded", () => {
    const d = buildChartData({ time_s: [0, 1, 2], heart_rate_hz: [2, 2, 2], power_w: [null, null, null] }, "ride", "metric", "distance");
    expect(d.xMode).toBe("time");
    expect(d.channels.map((c) => c.key)).toEqual(["heart_rate"]);
  });

  it("holds a distance that steps back, so x never decreases", () => {
    const d = buildChartData({ time_s: [0, 1, 2, 3], distance_m: [0, 10, 9, 20], heart_rate_hz: [2, 2, 2, 2] }, "run", "metric", "distance");
    expect(d.x).toEqual([0, 0.01, 0.01, 0.02]);
  });

  it("leaves standing still out of the pace chart", () => {
    const d = buildChartData({ time_s: [0, 1, 2, 3, 4, 5, 6, 7, 8], speed_mps: [0, 0, 0, 0, 0, 0, 0, 0, 0] }, "run", "metric", "time");
    expect(d.channels).toEqual([]);
  });
});

describe("a channel with a single value (the sample TCX's \"Night Run\": speed and power in 1 of 19 samples)", () => {
  const t = Array.from({ length: 19 }, (_, i) => i * 10);
  const once = (v: number) => t.map((_, i) => (i === 3 ? v : null));

  it("gets no chart, and its one value is said in words, with no range", () => {
    const d = buildChartData({ time_s: t, power_w: once(118), heart_rate_hz: t.map(() => 2.5) }, "run", "metric", "time");
    expect(d.channels.map((c) => c.key)).toEqual(["heart_rate"]);
    expect(d.single).toEqual([{ label: "Power", value: "118 W" }]);
  });

  it("gets no pace chart from a speed recorded once when nothing else gives a speed", () => {
    const d = buildChartData({ time_s: t, speed_mps: once(6.009) }, "run", "metric", "time");
    expect(d.channels).toEqual([]);
    expect(d.single).toEqual([{ label: "Pace", value: "2:46 /km" }]);
  });

  it("charts pace from the distance when the recorded speed is too sparse to draw", () => {
    const distance = t.map((s) => s * 3);
    expect(speedOf({ time_s: t, distance_m: distance, speed_mps: once(6.009) })).toEqual(t.map(() => 3));
    const d = buildChartData({ time_s: t, distance_m: distance, speed_mps: once(6.009) }, "run", "metric", "distance");
    expect(d.channels.map((c) => c.key)).toEqual(["pace"]);
    expect(d.single).toEqual([]);
  });

  it("is summarized as one value, not as a range from it to itself", () => {
    const pace = summarize({ key: "pace", values: [null, 166, null], format: (v) => `${v} /km` });
    expect(pace).toBe("one value, 166 /km");
    expect(pace).not.toMatch(/fastest|slowest/);
    expect(summarize({ key: "power", values: [118, null], format: (v) => `${v} W` })).toBe("one value, 118 W");
  });

  it("draws values that have no neighbour to join as points", () => {
    expect(isolatedPoints([1, null, 2, 3, null, 4])).toEqual([0, 5]);
    expect(isolatedPoints([null, 5, null])).toEqual([1]);
    expect(isolatedPoints([1, 2, 3])).toEqual([]);
  });
});

describe("speedOf", () => {
  it("derives speed from distance over time when the file recorded none", () => {
    expect(speedOf({ time_s: [0, 10, 20], distance_m: [0, 50, 150] })).toEqual([5, 5, 10]);
    expect(speedOf({ time_s: [0, 10] })).toBeNull();
  });
});

describe("smooth", () => {
  it("averages neighbours and keeps missing samples missing", () => {
    expect(smooth([1, 2, 3, null, 5], 3)).toEqual([1.5, 2, 2.5, null, 5]);
  });
});

describe("robustRange", () => {
  it("is not stretched by one spike", () => {
    const values = [...Array.from({ length: 200 }, (_, i) => 140 + (i % 10)), 250];
    const [lo, hi] = robustRange(values)!;
    expect(hi).toBeLessThan(160);
    expect(lo).toBeGreaterThan(130);
    expect(robustRange([null, null])).toBeNull();
  });

  it("keeps stops out of a pace chart's range", () => {
    // Running at 5:00 /km, with a tenth of the samples standing at a crossing (20:00 /km).
    const pace = [...Array.from({ length: 90 }, (_, i) => 290 + (i % 20)), ...Array.from({ length: 10 }, () => 1200)];
    const [, slowest] = robustRange(pace, true)!;
    expect(slowest).toBeLessThan(700);
    expect(robustRange(pace)![1]).toBeGreaterThan(1200);
  });
});

describe("summarize and formatX", () => {
  it("puts a chart into words", () => {
    expect(summarize({ key: "heart_rate", values: [100, null, 200], format: (v) => `${v} bpm` })).toBe("from 100 bpm to 200 bpm, average 150 bpm");
    const pace = [...Array.from({ length: 50 }, () => 300), 1500];
    expect(summarize({ key: "pace", values: pace, format: (v) => `${v}` })).toBe("fastest 300, slowest 300, average 300");
    expect(formatX(3725, "time", distanceUnit("run", "metric"))).toBe("1:02:05");
    expect(formatX(12.345, "distance", distanceUnit("ride", "imperial"))).toBe("12.3 mi");
  });

  it("puts a long recording into words (more values than a call takes as arguments)", () => {
    const values = Array.from({ length: 300_000 }, (_, i) => 120 + (i % 41));
    expect(summarize({ key: "heart_rate", values, format: (v) => `${v} bpm` })).toMatch(/^from 12\d bpm to 1[56]\d bpm, average /);
  });
});

describe("summarize says what the chart draws", () => {
  it("leaves out a spike the chart's range cuts off, as the chart does (a loose strap's 250 bpm, a slow start)", () => {
    const values = [69, ...Array.from({ length: 200 }, (_, i) => 140 + (i % 10)), 250];
    expect(summarize({ key: "heart_rate", values, format: (v) => `${v} bpm` })).toMatch(/^from 140 bpm to 149 bpm, average /);
    const [lo, hi] = chartRange({ key: "heart_rate", values })!;
    expect(lo).toBeGreaterThan(69);
    expect(hi).toBeLessThan(250);
  });

  it("says a pace's fastest as the chart shows it, not a GPS spike it cuts off", () => {
    const pace = [120, ...Array.from({ length: 200 }, (_, i) => 290 + (i % 20)), 1500];
    expect(summarize({ key: "pace", values: pace, format: (v) => `${v}` })).toMatch(/^fastest 290, slowest 309, average /);
  });
});

describe("pauses break the line", () => {
  // One sample a second, a stop of 18 minutes after 10 s, then 5 s more.
  const t = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1090, 1091, 1092, 1093, 1094];
  const streams = { time_s: t, heart_rate_hz: t.map(() => 2.5), distance_m: t.map((s, i) => (i <= 10 ? s * 3 : 30 + (i - 10) * 3)) };

  it("takes a pause as more than 10 s, or five times the usual interval between samples when that is longer", () => {
    expect(pauseThreshold(t)).toBe(10);
    expect(pauseThreshold([0, 15, 30, 45, 60, 2000])).toBe(75);
    expect(pauseThreshold([0])).toBe(10);
  });

  it("puts a row with no values in the pause against time, so no line joins its two sides", () => {
    const d = buildChartData(streams, "run", "metric", "time");
    expect(d.breaks).toEqual([11]);
    expect(d.x.slice(10, 13)).toEqual([10, 550, 1090]);
    for (const c of d.channels) expect(c.values[11]).toBeNull();
    expect(d.channels.find((c) => c.key === "heart_rate")!.values.filter((v) => v !== null)).toHaveLength(t.length);
    // Each row names the sample it shows (for the route's marker); the break names none.
    expect(d.rows).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, null, 11, 12, 13, 14, 15]);
  });

  it("names the sample of each row against distance, past samples with no distance", () => {
    const gaps = { time_s: [0, 1, 2, 3], distance_m: [0, null, 5, 9], heart_rate_hz: [2, 2, 2, 2] };
    expect(buildChartData(gaps, "run", "metric", "distance").rows).toEqual([0, 2, 3]);
  });

  it("leaves an activity without pauses as it was", () => {
    const d = buildChartData(run, "run", "metric", "time");
    expect(d.breaks).toEqual([]);
    expect(d.x).toEqual([0, 10, 20, 30, 40]);
  });

  it("draws a stop against distance where it happened, with no break when no distance passed in it", () => {
    const held = { ...streams, distance_m: t.map((s, i) => (i <= 10 ? s * 3 : 30 + (i - 11) * 3)) };
    expect(buildChartData(held, "run", "metric", "distance").breaks).toEqual([]);
    // A dropout that went on: broken as against time.
    expect(buildChartData(streams, "run", "metric", "distance").breaks).toEqual([11]);
  });
});

describe("the keyboard's cursor", () => {
  it("stops at each sample, not at a pause's break nor twice at one distance", () => {
    expect(cursorStops({ x: [0, 1, 2, 2, 3], breaks: [] })).toEqual([0, 1, 2, 4]);
    expect(cursorStops({ x: [0, 10, 550, 1090], breaks: [2] })).toEqual([0, 1, 3]);
  });

  it("moves as a slider does: arrows by one, Page Up and Down by a twentieth, Home and End to the ends", () => {
    expect(moveCursor(5, "ArrowRight", 100)).toBe(6);
    expect(moveCursor(5, "ArrowLeft", 100)).toBe(4);
    expect(moveCursor(0, "ArrowLeft", 100)).toBe(0);
    expect(moveCursor(99, "ArrowUp", 100)).toBe(99);
    expect(moveCursor(5, "PageUp", 100)).toBe(10);
    expect(moveCursor(5, "PageDown", 100)).toBe(0);
    expect(moveCursor(5, "Home", 100)).toBe(0);
    expect(moveCursor(5, "End", 100)).toBe(99);
    expect(moveCursor(null, "ArrowRight", 100)).toBe(0);
    expect(moveCursor(5, "a", 100)).toBeNull();
    expect(moveCursor(null, "End", 0)).toBeNull();
  });

  it("reads every chart's value at the cursor in words", () => {
    const d = buildChartData(run, "run", "metric", "distance");
    expect(readoutAt(d, 1)).toBe("At 0.03 km: pace 5:33 /km, heart rate 150 bpm, elevation 11 m");
    expect(readoutAt(d, 2)).toBe("At 0.06 km: pace 5:33 /km, no heart rate, elevation 12 m");
  });
});

describe("speedReading: pace or speed by sport, whatever the units", () => {
  it("reads a run as pace and a ride as speed, in metric and in imperial units", () => {
    expect(speedReading("run", "metric").label).toBe("Pace");
    expect(speedReading("run", "metric").format(1000 / 300)).toBe("5:00 /km");
    expect(speedReading("ride", "imperial").label).toBe("Speed");
    expect(speedReading("ride", "imperial").format(8)).toBe("17.9 mph");
    expect(speedReading("walk", "imperial").format(1609.344 / 900)).toBe("15:00 /mi");
  });

  it("reads a swim as pace per 100 m, or per 100 yd in imperial units, never as km/h or mph", () => {
    expect(speedReading("swim", "metric")).toMatchObject({ label: "Pace" });
    expect(speedReading("swim", "metric").format(100 / 105)).toBe("1:45 /100 m");
    expect(speedReading("swim", "imperial")).toMatchObject({ label: "Pace" });
    expect(speedReading("swim", "imperial").format(91.44 / 90)).toBe("1:30 /100 yd");
  });
});

describe("a swim's chart", () => {
  // A slow swimmer's lengths (0.4 m/s is 4:10 /100 m, slower than a walk's pace floor) and a rest at the wall.
  const swim: StreamsWire["streams"] = { time_s: [0, 10, 20, 30, 40, 50], speed_mps: [0.4, 0.4, 0.4, 0.4, 0.4, 0.4], distance_m: [0, 4, 8, 12, 16, 20] };

  it("charts pace per 100 m, its axis and cursor in the same words, the slow lengths included", () => {
    const d = buildChartData(swim, "swim", "metric", "time");
    expect(d.channels.map((c) => c.key)).toEqual(["pace"]);
    const pace = d.channels[0]!;
    expect(pace.unit).toBe("min/100 m");
    expect(pace.values.map((v) => (v === null ? null : Math.round(v)))).toEqual([250, 250, 250, 250, 250, 250]);
    expect(pace.inverted).toBe(true);
    expect(readoutAt(d, 1)).toBe("At 0:10: pace 4:10 /100 m");
  });

  it("charts pace per 100 yd for imperial units, and leaves out a rest at the wall", () => {
    const d = buildChartData({ ...swim, speed_mps: [1, 1, 1, 0, 0, 0] }, "swim", "imperial", "time");
    const pace = d.channels[0]!;
    expect(pace.unit).toBe("min/100 yd");
    expect(pace.format(91.44)).toBe("1:31 /100 yd");
    expect(pace.values.at(-1)).toBeNull();
  });
});

describe("distanceReading", () => {
  it("gives a swim's distance in whole metres or yards, and other sports' in km or miles", () => {
    expect(distanceReading("swim", "metric")(1500)).toBe("1,500 m");
    expect(distanceReading("swim", "imperial")(1500)).toBe("1,640 yd");
    expect(distanceReading("run", "metric")(10_000)).toBe("10.00 km");
    expect(distanceReading("ride", "imperial")(1609.344)).toBe("1.00 mi");
  });
});

describe("a chart is at least as high as a change worth seeing, centred on the values", () => {
  const span = (r: [number, number] | null) => r![1] - r![0];
  const mid = (r: [number, number] | null) => (r![0] + r![1]) / 2;
  const t = Array.from({ length: 20 }, (_, i) => i * 10);
  const noise = (base: number, by: number) => t.map((_, i) => base + by * Math.sin(i));

  it("draws 0.4 m of GPS noise on flat ground as flat: 20 m high, or 60 ft", () => {
    for (const [units, least] of [["metric", 20], ["imperial", 60]] as const) {
      const d = buildChartData({ time_s: t, altitude_m: noise(5, 0.2) }, "run", units, "time");
      const elevation = d.channels.find((c) => c.key === "elevation")!;
      expect(span(chartRange(elevation))).toBeCloseTo(least, 6);
      expect(mid(chartRange(elevation))).toBeCloseTo(units === "metric" ? 5 : 5 / 0.3048, 0);
    }
  });

  it("draws a steady ride's speed 2 km/h or 1 mph high, a steady pace 30 s, heart rate 20 bpm and power 50 W", () => {
    const streams = { time_s: t, speed_mps: noise(8, 0.001), heart_rate_hz: noise(2.5, 0.001), power_w: noise(200, 0.1) };
    const ride = buildChartData(streams, "ride", "metric", "time");
    const of = (d: typeof ride, key: string) => chartRange(d.channels.find((c) => c.key === key)!);
    expect(span(of(ride, "speed"))).toBeCloseTo(2, 6);
    expect(mid(of(ride, "speed"))).toBeCloseTo(28.8, 1);
    expect(span(of(buildChartData(streams, "ride", "imperial", "time"), "speed"))).toBeCloseTo(1, 6);
    expect(span(of(ride, "heart_rate"))).toBeCloseTo(20, 6);
    expect(mid(of(ride, "heart_rate"))).toBeCloseTo(150, 0);
    expect(span(of(ride, "power"))).toBeCloseTo(50, 6);
    expect(span(of(buildChartData(streams, "run", "metric", "time"), "pace"))).toBeCloseTo(30, 6);
    expect(span(of(buildChartData(streams, "swim", "imperial", "time"), "pace"))).toBeCloseTo(30, 6);
  });

  it("leaves a chart that varies more than that as it was", () => {
    const hilly = buildChartData({ time_s: t, altitude_m: noise(100, 40) }, "run", "metric", "time");
    const values = hilly.channels[0]!.values.filter((v): v is number => v !== null);
    expect(chartRange(hilly.channels[0]!)).toEqual(robustRange(values));
    const [lo, hi] = robustRange([10, 10.4], false, 20)!;
    expect(lo).toBeCloseTo(0.2, 9);
    expect(hi).toBeCloseTo(20.2, 9);
  });
});

describe("a swim's charts run in the unit its headline and laps say distance in", () => {
  const swim: StreamsWire["streams"] = { time_s: [0, 20, 40, 60], distance_m: [0, 25, 50, 75], speed_mps: [1.2, 1.2, 1.2, 1.2] };

  it("in yards for imperial units, and metres for metric, not miles or km", () => {
    const yd = buildChartData(swim, "swim", "imperial", "distance");
    expect(yd.distance.label).toBe("yd");
    expect(yd.x.map(Math.round)).toEqual([0, 27, 55, 82]);
    expect(readoutAt(yd, 3)).toBe("At 82 yd: pace 1:16 /100 yd");
    const m = buildChartData(swim, "swim", "metric", "distance");
    expect(m.x).toEqual([0, 25, 50, 75]);
    expect(readoutAt(m, 2)).toBe("At 50 m: pace 1:23 /100 m");
  });

  it("and every sport's charts say distance in the unit distanceReading says it in", () => {
    for (const sport of ["swim", "run", "ride", "walk"] as const)
      for (const units of ["metric", "imperial"] as const) {
        expect(distanceReading(sport, units)(1500).endsWith(` ${distanceUnit(sport, units).label}`)).toBe(true);
        expect(buildChartData(swim, sport, units, "distance").distance.label).toBe(distanceUnit(sport, units).label);
      }
  });
});
