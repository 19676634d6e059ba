import type uPlot from "uplot";
import { describe, expect, it } from "vitest";
import { chartOptions, PACE_INCRS } from "./chart-options";
import { buildChartData, chartRange, type Channel, type ChartData } from "./chart-series";
import type { StreamsWire } from "./files-api";

// What uPlot is given for each chart: the fill, the axes' labels. uPlot itself draws in a
// browser; these are the options it draws from.

const options = (data: ChartData, channel: Channel) =>
  chartOptions({ xMode: data.xMode, channel, distance: data.distance, syncKey: "k", width: 600, height: 150, onCursor: () => {} });

/** What an axis's `values` answers for ticks `step` apart, as uPlot calls it. */
function labels(opts: uPlot.Options, axis: number, splits: number[], step: number): unknown[] {
  const values = opts.axes![axis]!.values as (u: uPlot, splits: number[], axisIdx: number, space: number, incr: number) => unknown[];
  return values({} as uPlot, splits, axis, 50, step);
}

const byKey = (data: ChartData, key: Channel["key"]) => data.channels.find((c) => c.key === key)!;

describe("the elevation chart's fill", () => {
  // samples/fit/garmin-edge-820-bike.fit rides at 18 m below the sea.
  const below: StreamsWire["streams"] = { time_s: [0, 10, 20, 30, 40], altitude_m: [-18, -17, -15, -16, -18] };

  it("goes down to the bottom of the plot, not to 0 m (uPlot's default), so land below the sea does not hang from the top", () => {
    const data = buildChartData(below, "ride", "metric", "time");
    const elevation = byKey(data, "elevation");
    const series = options(data, elevation).series[1]!;
    expect(series.fill).toBeTruthy();
    expect(typeof series.fillTo).toBe("function");
    const [lo, hi] = chartRange(elevation)!;
    const u = { scales: { y: { min: lo, max: hi } } } as unknown as uPlot;
    expect((series.fillTo as (u: uPlot, i: number, min: number, max: number) => number)(u, 1, -18, -15)).toBe(lo);
    expect(lo).toBeLessThan(-18);
  });
});

describe("axis labels follow the ticks' step, so no two read the same", () => {
  const run: StreamsWire["streams"] = { time_s: [0, 10, 20, 30], distance_m: [0, 10, 20, 30], speed_mps: [1, 1, 1, 1], heart_rate_hz: [2, 2.2, 2.4, 2.3] };

  it("writes a short activity's distance ticks 5 m apart with three decimals, not \"0.01, 0.01\"", () => {
    const data = buildChartData(run, "run", "metric", "distance");
    const opts = options(data, byKey(data, "heart_rate"));
    const got = labels(opts, 0, [0, 0.005, 0.01, 0.015, 0.02, 0.025], 0.005);
    expect(got).toEqual(["0.000", "0.005", "0.010", "0.015", "0.020", "0.025"]);
    expect(labels(opts, 0, [0, 0.25, 0.5, 0.75], 0.25)).toEqual(["0.00", "0.25", "0.50", "0.75"]);
    expect(labels(opts, 0, [0, 2, 4, 6], 2)).toEqual(["0", "2", "4", "6"]);
    // A tick at zero computed a hair below it is not "-0.000".
    expect(labels(opts, 0, [-1e-17, 0.005], 0.005)).toEqual(["0.000", "0.005"]);
  });

  it("writes a value axis's ticks with the decimals of their step (a speed's 17.85, 17.90, 17.95, not 17.9 three times)", () => {
    const ride = buildChartData({ time_s: [0, 10, 20], speed_mps: [4.96, 4.97, 4.98] }, "ride", "metric", "time");
    const got = labels(options(ride, byKey(ride, "speed")), 1, [17.85, 17.9, 17.95], 0.05);
    expect(new Set(got).size).toBe(3);
    expect(got).toEqual(["17.85", "17.90", "17.95"]);
  });
});

/**
 * The ticks uPlot puts on a value axis of `height` px: the smallest of `incrs` that leaves
 * `space` px between ticks, at each multiple of it within the range (uPlot's rule for a
 * numeric axis, with its default space of 30 px between a y axis's ticks).
 */
function ticks([lo, hi]: [number, number], incrs: readonly number[], height = 150, space = 30): number[] {
  const incr = incrs.find((i) => (i / (hi - lo)) * height >= space) ?? incrs.at(-1)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / incr) * incr; v <= hi; v += incr) out.push(v);
  return out;
}

describe("a steady pace's chart has labels on its axis", () => {
  it("ranges at least 30 s per km, so ticks at PACE_INCRS fall in it and read differently", () => {
    // 5:02 /km, steady within a fraction of a second.
    const steady = Array.from({ length: 40 }, (_, i) => 1000 / (302.4 + 0.2 * Math.sin(i)));
    const data = buildChartData({ time_s: steady.map((_, i) => i * 5), speed_mps: steady }, "run", "metric", "time");
    const pace = byKey(data, "pace");
    const range = chartRange(pace)!;
    const at = ticks(range, PACE_INCRS);
    expect(at.length).toBeGreaterThanOrEqual(2);
    const got = labels(options(data, pace), 1, at, at[1]! - at[0]!);
    expect(new Set(got).size).toBe(at.length);
  });
});
