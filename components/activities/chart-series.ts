import type { StreamsWire } from "./files-api";
import type { SportType } from "./sport";
import { formatDuration, fromElevationMeters, fromMeters, fromMps, hzToBpm, METERS_PER_MILE, UNIT_LABELS, type Units } from "./units";

// What the activity page charts, computed from the streams answer: pure, so tested without a DOM.

export type XMode = "distance" | "time";
export type ChannelKey = "pace" | "speed" | "heart_rate" | "power" | "elevation";

export type Channel = {
  key: ChannelKey;
  label: string;
  unit: string;
  values: (number | null)[];
  /** How a value reads on the axis and under the cursor. */
  format: (v: number) => string;
  /** Pace: a smaller number is faster, and faster belongs at the top. */
  inverted: boolean;
  color: string;
  fill: boolean;
};

/**
 * `channels` are charted; `single` are the channels with one value to draw (a file that recorded
 * power in one sample of many): no line and no range, so no chart, only the value in words.
 */
export type ChartData = { x: number[]; xMode: XMode; channels: Channel[]; single: { label: string; value: string }[] };

// Running-type sports read pace; everything else reads speed (CONTRACT §9 units, the console's wording).
const PACE_SPORTS: ReadonlySet<SportType> = new Set(["run", "trail_run", "walk", "hike"]);
export const readsPace = (sport: SportType) => PACE_SPORTS.has(sport);

// Below a slow walk a pace means standing still: 0.5 m/s is 33 min/km. Left out, not drawn off the scale.
const MIN_PACE_SPEED_MPS = 0.5;
// GPS speed jitters from sample to sample; a short centred mean shows the effort, not the noise.
const SMOOTH_WINDOW = 5;

// Colours hold 4.5:1 or more against white (axe AA) and differ in lightness, not hue alone.
const COLORS: Record<ChannelKey, string> = {
  pace: "#1466bd",
  speed: "#1466bd",
  heart_rate: "#b91c1c",
  power: "#6d28d9",
  elevation: "#166534",
};

const present = (a: readonly (number | null)[] | undefined): a is (number | null)[] =>
  !!a && a.some((v) => v !== null && Number.isFinite(v));

const drawable = (a: readonly (number | null)[]) => a.filter((v): v is number => v !== null && Number.isFinite(v));

/** A channel is charted from this many values: one value is a point with no line and no range. */
export const MIN_CHART_VALUES = 2;

/** Whether the streams can be drawn against distance (a distance channel with at least two values). */
export function hasDistanceAxis(s: StreamsWire["streams"]): boolean {
  return (s.distance_m ?? []).filter((v) => v !== null).length >= 2;
}

/**
 * Speed per sample: the recorded channel, else distance over time between neighbouring samples.
 * A speed recorded in fewer samples than a chart needs gives way to the distance, when that
 * gives more.
 */
export function speedOf(s: StreamsWire["streams"]): (number | null)[] | null {
  const recorded = present(s.speed_mps) ? s.speed_mps : null;
  if (recorded && drawable(recorded).length >= MIN_CHART_VALUES) return recorded;
  const derived = speedFromDistance(s);
  if (!recorded) return derived;
  return derived && drawable(derived).length > drawable(recorded).length ? derived : recorded;
}

function speedFromDistance(s: StreamsWire["streams"]): (number | null)[] | null {
  const t = s.time_s;
  const d = s.distance_m;
  if (!t || !present(d)) return null;
  const out: (number | null)[] = new Array(t.length).fill(null);
  let prev = -1;
  for (let i = 0; i < t.length; i++) {
    if (d[i] === null || t[i] === null) continue;
    if (prev >= 0) {
      const dt = t[i]! - t[prev]!;
      if (dt > 0) out[i] = Math.max(0, (d[i]! - d[prev]!) / dt);
    }
    prev = i;
  }
  if (out.length > 1 && out[0] === null) out[0] = out[1] ?? null;
  return out;
}

/** A centred moving mean over the values present; a missing sample stays missing. */
export function smooth(values: readonly (number | null)[], window = SMOOTH_WINDOW): (number | null)[] {
  const half = Math.floor(window / 2);
  return values.map((v, i) => {
    if (v === null) return null;
    let sum = 0;
    let n = 0;
    for (let j = Math.max(0, i - half); j <= Math.min(values.length - 1, i + half); j++) {
      const w = values[j];
      if (w !== null && w !== undefined) {
        sum += w;
        n++;
      }
    }
    return sum / n;
  });
}

/**
 * The x axis and the channels to chart. Against distance, samples without a distance are left
 * out (uPlot needs x ascending and present), and a distance that steps back (a GPS correction)
 * is held at its highest so far.
 */
export function buildChartData(streams: StreamsWire["streams"], sport: SportType, units: Units, xMode: XMode): ChartData {
  const time = streams.time_s ?? [];
  const mode: XMode = xMode === "distance" && hasDistanceAxis(streams) ? "distance" : "time";
  let keep: number[];
  let x: number[];
  if (mode === "distance") {
    keep = [];
    x = [];
    let max = -Infinity;
    streams.distance_m!.forEach((d, i) => {
      if (d === null || !Number.isFinite(d)) return;
      max = Math.max(max, d);
      keep.push(i);
      x.push(fromMeters(max, units));
    });
  } else {
    keep = [];
    x = [];
    time.forEach((t, i) => {
      if (t === null || !Number.isFinite(t)) return;
      keep.push(i);
      x.push(t);
    });
  }
  const pick = (a: readonly (number | null)[]) => keep.map((i) => a[i] ?? null);
  const channels: Channel[] = [];

  const speed = speedOf(streams);
  if (speed && present(speed)) {
    const smoothed = smooth(speed);
    if (readsPace(sport)) {
      const perUnit = units === "metric" ? 1000 : METERS_PER_MILE;
      channels.push({
        key: "pace",
        label: "Pace",
        unit: `min${UNIT_LABELS[units].pace}`,
        values: pick(smoothed.map((v) => (v !== null && v >= MIN_PACE_SPEED_MPS ? perUnit / v : null))),
        format: (v) => `${formatDuration(v)} ${UNIT_LABELS[units].pace}`,
        inverted: true,
        color: COLORS.pace,
        fill: false,
      });
    } else {
      channels.push({
        key: "speed",
        label: "Speed",
        unit: UNIT_LABELS[units].speed,
        values: pick(smoothed.map((v) => (v === null ? null : fromMps(v, units)))),
        format: (v) => `${v.toFixed(1)} ${UNIT_LABELS[units].speed}`,
        inverted: false,
        color: COLORS.speed,
        fill: false,
      });
    }
  }
  if (present(streams.heart_rate_hz))
    channels.push({
      key: "heart_rate",
      label: "Heart rate",
      unit: "bpm",
      values: pick(streams.heart_rate_hz.map((v) => (v === null ? null : hzToBpm(v)))),
      format: (v) => `${Math.round(v)} bpm`,
      inverted: false,
      color: COLORS.heart_rate,
      fill: false,
    });
  if (present(streams.power_w))
    channels.push({
      key: "power",
      label: "Power",
      unit: "W",
      values: pick(streams.power_w),
      format: (v) => `${Math.round(v)} W`,
      inverted: false,
      color: COLORS.power,
      fill: false,
    });
  if (present(streams.altitude_m))
    channels.push({
      key: "elevation",
      label: "Elevation",
      unit: UNIT_LABELS[units].elevation,
      values: pick(streams.altitude_m.map((v) => (v === null ? null : fromElevationMeters(v, units)))),
      format: (v) => `${Math.round(v)} ${UNIT_LABELS[units].elevation}`,
      inverted: false,
      color: COLORS.elevation,
      fill: true,
    });
  const single = channels.filter((c) => drawable(c.values).length === 1);
  return {
    x,
    xMode: mode,
    channels: channels.filter((c) => drawable(c.values).length >= MIN_CHART_VALUES),
    single: single.map((c) => ({ label: c.label, value: c.format(drawable(c.values)[0]!) })),
  };
}

/**
 * The values with no drawn neighbour on either side: a line joins only neighbouring values, so
 * these would not show at all; the chart draws them as points.
 */
export function isolatedPoints(values: readonly (number | null)[]): number[] {
  const at = (i: number) => values[i] !== null && values[i] !== undefined && Number.isFinite(values[i]);
  const out: number[] = [];
  for (let i = 0; i < values.length; i++) if (at(i) && !at(i - 1) && !at(i + 1)) out.push(i);
  return out;
}

/** The x value under the cursor or on the axis: `12.3 km`, or `1:02:03` of elapsed time. */
export function formatX(v: number, mode: XMode, units: Units): string {
  return mode === "distance" ? `${v.toFixed(v < 10 ? 2 : 1)} ${UNIT_LABELS[units].distance}` : formatDuration(v);
}

/**
 * The y range from the 1st to the 99th percentile, padded by a tenth: one GPS spike (a pace of
 * 30 min/km while stopped at a light, a heart rate of 250 from a loose strap) must not flatten
 * the rest of the curve. Null when there is nothing to range.
 */
export function robustRange(values: readonly (number | null)[], pace = false): [number, number] | null {
  const sorted = values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
  const lo = at(0.01);
  // Every stop at a crossing is a pace far slower than the run; beyond twice the median pace is
  // a pause, not running, and drawing it would squash the running into a thin band.
  const hi = pace ? Math.min(at(0.99), Math.max(lo, at(0.5) * 2)) : at(0.99);
  const pad = hi > lo ? (hi - lo) * 0.1 : Math.max(1, Math.abs(hi) * 0.1);
  return [lo - pad, hi + pad];
}

/** The range and mean of a channel in words, for people who cannot see the chart. */
export function summarize(channel: Pick<Channel, "values" | "format" | "key">): string | null {
  const vs = drawable(channel.values);
  if (vs.length === 0) return null;
  // One value is no range: "fastest 2:46 /km, slowest 2:46 /km" would claim one.
  if (vs.length === 1) return `one value, ${channel.format(vs[0]!)}`;
  const min = Math.min(...vs);
  const max = Math.max(...vs);
  const mean = vs.reduce((a, b) => a + b, 0) / vs.length;
  if (channel.key === "pace") {
    // Stops are left out of the words as they are of the chart's range (robustRange).
    const range = robustRange(vs, true)!;
    const moving = vs.filter((v) => v <= range[1]);
    const slowest = Math.max(...moving);
    const avg = moving.reduce((a, b) => a + b, 0) / moving.length;
    return `fastest ${channel.format(min)}, slowest ${channel.format(slowest)}, average ${channel.format(avg)}`;
  }
  return `from ${channel.format(min)} to ${channel.format(max)}, average ${channel.format(mean)}`;
}
