import type { StreamsWire } from "./files-api";
import type { SportType } from "./sport";
import {
  formatDistance,
  formatDuration,
  formatPace,
  formatSpeed,
  formatSwimDistance,
  fromElevationMeters,
  fromMeters,
  fromMps,
  fromSwimMeters,
  hzToBpm,
  pacePer,
  SWIM_DISTANCE_LABELS,
  toMeters,
  toSwimMeters,
  UNIT_LABELS,
  type PaceBasis,
  type Units,
} from "./units";

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
  /**
   * The least height of its chart, in its unit (`robustRange`): a steady ride's speed or a flat
   * road's elevation varies by a hair, which drawn across the whole height would look like
   * sprints and hills, with every axis label the same number.
   */
  minSpan: number;
};

/**
 * A sport's distance unit, on the charts' axis and under their cursor, and in the activity form:
 * `fromMeters` gives a value in the unit (`label`) the activity's headline and laps say distance
 * in (`distanceReading`), `toMeters` takes one back, `format` reads a value in words, and
 * `inputDigits` is how many decimals a form field shows (whole metres or yards for a swim, km or
 * miles to the metre).
 */
export type DistanceUnit = { label: string; fromMeters: (m: number) => number; toMeters: (v: number) => number; format: (v: number) => string; inputDigits: number };

/**
 * `channels` are charted; `single` are the channels with one value to draw (a file that recorded
 * power in one sample of many): no line and no range, so no chart, only the value in words.
 * `breaks` are the rows put in where the activity paused (`pauseThreshold`): an x with every
 * channel null, so the chart draws no line across the pause.
 */
export type ChartData = {
  x: number[];
  xMode: XMode;
  /** The unit of `x` against distance, and of the cursor's distance against either. */
  distance: DistanceUnit;
  channels: Channel[];
  single: { label: string; value: string }[];
  breaks: number[];
  /** The sample (an index into the streams) each row of `x` shows; null for a row that breaks the line. */
  rows: (number | null)[];
};

// Running-type sports read pace per km or mile, swims pace per 100 m or 100 yd (as swimmers
// read it); everything else reads speed (CONTRACT §9 units, the console's wording).
const PACE_BASIS: Partial<Record<SportType, PaceBasis>> = { run: "distance", trail_run: "distance", walk: "distance", hike: "distance", swim: "swim" };

/** What a sport's pace is given per, or null for a sport that reads speed. */
export const paceBasis = (sport: SportType): PaceBasis | null => PACE_BASIS[sport] ?? null;

/**
 * Pace or speed for a sport, with its words: the one rule the headline, the "Speed and effort"
 * card, the laps and the charts follow, so one page never says both for one activity.
 */
export function speedReading(sport: SportType, units: Units): { label: "Pace" | "Speed"; format: (mps: number) => string } {
  const basis = paceBasis(sport);
  return basis ? { label: "Pace", format: (v) => formatPace(v, units, basis) } : { label: "Speed", format: (v) => formatSpeed(v, units) };
}

/** A distance as the sport reads it: a swim in whole metres or yards, anything else in km or miles. */
export function distanceReading(sport: SportType, units: Units): (m: number) => string {
  return paceBasis(sport) === "swim" ? (m) => formatSwimDistance(m, units) : (m) => formatDistance(m, units);
}

/**
 * The distance unit for a sport: the one `distanceReading` says, so a swim's charts and its form
 * field run in metres or yards as its headline and laps do, not in km or miles.
 */
export function distanceUnit(sport: SportType, units: Units): DistanceUnit {
  if (paceBasis(sport) === "swim") {
    const label = SWIM_DISTANCE_LABELS[units];
    return {
      label,
      fromMeters: (m) => fromSwimMeters(m, units),
      toMeters: (v) => toSwimMeters(v, units),
      format: (v) => `${Math.round(v).toLocaleString("en-US")} ${label}`,
      inputDigits: 0,
    };
  }
  const label = UNIT_LABELS[units].distance;
  return { label, fromMeters: (m) => fromMeters(m, units), toMeters: (v) => toMeters(v, units), format: (v) => `${v.toFixed(v < 10 ? 2 : 1)} ${label}`, inputDigits: 3 };
}

// Each chart's least height (`Channel.minSpan`), in its unit: what a person would call a change
// worth seeing. Pace in seconds per km, mile, 100 m or 100 yd.
const MIN_SPAN = {
  pace: 30,
  speed: { metric: 2, imperial: 1 },
  heart_rate: 20,
  power: 50,
  elevation: { metric: 20, imperial: 60 },
} as const;

// A pause is a gap between samples longer than both of these: 10 s, since a device recording
// every second or "smart" every few seconds never leaves 10 s between samples while moving;
// 5 times the usual interval, since the streams the page reads are thinned (at most 1,000
// samples: a 4-hour ride has one every 15 s or so, unevenly, where peaks are kept). The usual
// interval is the median, which the pauses themselves do not pull up as they would a mean.
const MIN_PAUSE_S = 10;
const PAUSE_FACTOR = 5;

/** The gap between two samples, in seconds, beyond which the activity paused (see MIN_PAUSE_S). */
export function pauseThreshold(times: readonly number[]): number {
  const steps: number[] = [];
  for (let i = 1; i < times.length; i++) if (times[i]! > times[i - 1]!) steps.push(times[i]! - times[i - 1]!);
  if (steps.length === 0) return MIN_PAUSE_S;
  steps.sort((a, b) => a - b);
  const mid = steps.length >> 1;
  const median = steps.length % 2 ? steps[mid]! : (steps[mid - 1]! + steps[mid]!) / 2;
  return Math.max(MIN_PAUSE_S, PAUSE_FACTOR * median);
}

// Below a slow walk a pace means standing still: 0.5 m/s is 33 min/km. Left out, not drawn off
// the scale. A swimmer is slower: 0.25 m/s is 6:40 /100 m, slower than any length is swum, so
// what lies below it is a rest at the wall.
const MIN_PACE_SPEED_MPS: Record<PaceBasis, number> = { distance: 0.5, swim: 0.25 };
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
  const distance = distanceUnit(sport, units);
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
      x.push(distance.fromMeters(max));
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
  // Across a pause the line would join the last sample before it to the first after it, as if
  // the athlete had gone on at speeds in between: a row with no values (uPlot draws no line
  // through a null) goes between them. Against distance a pause adds no distance, and a break
  // at the same x would be a second value under the cursor there; only a stretch that moved on
  // (a dropout) gets one.
  const threshold = pauseThreshold(keep.map((i) => time[i]).filter((t): t is number => t !== null && t !== undefined && Number.isFinite(t)));
  const rows: (number | null)[] = [];
  const rowX: number[] = [];
  const breaks: number[] = [];
  keep.forEach((k, j) => {
    if (j > 0) {
      const prev = keep[j - 1]!;
      const t0 = time[prev];
      const t1 = time[k];
      if (t0 !== null && t0 !== undefined && t1 !== null && t1 !== undefined && t1 - t0 > threshold && x[j]! > x[j - 1]!) {
        breaks.push(rows.length);
        rows.push(null);
        rowX.push((x[j - 1]! + x[j]!) / 2);
      }
    }
    rows.push(k);
    rowX.push(x[j]!);
  });
  x = rowX;
  const pick = (a: readonly (number | null)[]) => rows.map((i) => (i === null ? null : (a[i] ?? null)));
  const channels: Channel[] = [];

  const speed = speedOf(streams);
  if (speed && present(speed)) {
    const smoothed = smooth(speed);
    const basis = paceBasis(sport);
    if (basis) {
      const per = pacePer(units, basis);
      const slowest = MIN_PACE_SPEED_MPS[basis];
      channels.push({
        key: "pace",
        label: "Pace",
        unit: `min${per.label}`,
        values: pick(smoothed.map((v) => (v !== null && v >= slowest ? per.meters / v : null))),
        format: (v) => `${formatDuration(v)} ${per.label}`,
        inverted: true,
        color: COLORS.pace,
        fill: false,
        minSpan: MIN_SPAN.pace,
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
        minSpan: MIN_SPAN.speed[units],
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
      minSpan: MIN_SPAN.heart_rate,
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
      minSpan: MIN_SPAN.power,
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
      minSpan: MIN_SPAN.elevation[units],
    });
  const single = channels.filter((c) => drawable(c.values).length === 1);
  return {
    x,
    xMode: mode,
    distance,
    channels: channels.filter((c) => drawable(c.values).length >= MIN_CHART_VALUES),
    single: single.map((c) => ({ label: c.label, value: c.format(drawable(c.values)[0]!) })),
    breaks,
    rows,
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

/** The x value under the cursor: `12.3 km`, `1,500 m` (a swim: `distance`), or `1:02:03` of elapsed time. */
export function formatX(v: number, mode: XMode, distance: DistanceUnit): string {
  return mode === "distance" ? distance.format(v) : formatDuration(v);
}

/**
 * The decimals that write every multiple of an axis's tick step exactly: 0.005 → 3, 0.25 → 2,
 * 0.5 → 1, 2 → 0 (at most 6).
 */
export function stepDecimals(step: number): number {
  for (let d = 0; d < 6; d++) {
    const scaled = Math.abs(step) * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return d;
  }
  return 6;
}

/**
 * An axis's tick labels, for ticks `step` apart: with the decimals the step needs, so two ticks
 * never read the same (ticks 0.005 km apart rounded to 2 decimals read "0.01, 0.01").
 */
export function tickLabels(splits: readonly (number | null)[], step: number): (string | null)[] {
  const d = stepDecimals(step);
  // A tick at zero computed as -1e-17 would read "-0.00".
  return splits.map((v) => (v === null ? null : (Math.abs(v) < Math.abs(step) / 2 ? 0 : v).toFixed(d)));
}

/**
 * The y range from the 1st to the 99th percentile, padded by a tenth: one GPS spike (a pace of
 * 30 min/km while stopped at a light, a heart rate of 250 from a loose strap) must not flatten
 * the rest of the curve. At least `minSpan` high, centred on the values: a variation smaller than
 * that is drawn as small as it is. Null when there is nothing to range.
 */
export function robustRange(values: readonly (number | null)[], pace = false, minSpan = 0): [number, number] | null {
  const sorted = values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
  const lo = at(0.01);
  // Every stop at a crossing is a pace far slower than the run; beyond twice the median pace is
  // a pause, not running, and drawing it would squash the running into a thin band.
  const hi = pace ? Math.min(at(0.99), Math.max(lo, at(0.5) * 2)) : at(0.99);
  const pad = hi > lo ? (hi - lo) * 0.1 : Math.max(1, Math.abs(hi) * 0.1);
  if (hi - lo + 2 * pad >= minSpan) return [lo - pad, hi + pad];
  const mid = (lo + hi) / 2;
  return [mid - minSpan / 2, mid + minSpan / 2];
}

/** The y range a channel's chart draws: what lies outside it is cut off, in the chart and in its words (`summarize`). */
export function chartRange(channel: Pick<Channel, "values" | "key"> & Partial<Pick<Channel, "minSpan">>): [number, number] | null {
  return robustRange(channel.values, channel.key === "pace", channel.minSpan ?? 0);
}

/**
 * The range and mean of a channel in words, for people who cannot see the chart. The range is
 * what the chart shows (`chartRange`): a spike it cuts off is not said either, so the words and
 * the picture agree.
 */
export function summarize(channel: Pick<Channel, "values" | "format" | "key"> & Partial<Pick<Channel, "minSpan">>): string | null {
  const vs = drawable(channel.values);
  if (vs.length === 0) return null;
  // One value is no range: "fastest 2:46 /km, slowest 2:46 /km" would claim one.
  if (vs.length === 1) return `one value, ${channel.format(vs[0]!)}`;
  const [lo, hi] = chartRange(channel)!;
  const shown = vs.filter((v) => v >= lo && v <= hi);
  // A loop, not Math.min(...shown): a long activity's values are more arguments than a call may take.
  let min = Infinity;
  let max = -Infinity;
  for (const v of shown) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (channel.key === "pace") {
    // Stops (paces slower than the chart's range) are left out of the average too: they are not running.
    const moving = vs.filter((v) => v <= hi);
    const avg = moving.reduce((a, b) => a + b, 0) / moving.length;
    return `fastest ${channel.format(min)}, slowest ${channel.format(max)}, average ${channel.format(avg)}`;
  }
  const mean = vs.reduce((a, b) => a + b, 0) / vs.length;
  return `from ${channel.format(min)} to ${channel.format(max)}, average ${channel.format(mean)}`;
}

/**
 * Where the keyboard's cursor stops: each recorded sample (not a pause's break) at an x of its
 * own. Against distance a stop holds the distance for many samples: one place on the chart,
 * one stop.
 */
export function cursorStops(data: Pick<ChartData, "x" | "breaks">): number[] {
  const breaks = new Set(data.breaks);
  const out: number[] = [];
  let last = -Infinity;
  data.x.forEach((v, i) => {
    if (breaks.has(i) || !(v > last)) return;
    out.push(i);
    last = v;
  });
  return out;
}

/**
 * The stop (an index into `cursorStops`) a key moves the cursor to, as a slider's keys do:
 * arrows by one sample, Page Up and Page Down by a twentieth of the activity, Home and End to
 * its ends. Null for a key that does not move it.
 */
export function moveCursor(at: number | null, key: string, count: number): number | null {
  if (count === 0) return null;
  const big = Math.max(1, Math.round(count / 20));
  const from = at ?? 0;
  // An arrow's first press shows the cursor where it starts, at the first sample.
  const step = (by: number) => (at === null ? 0 : from + by);
  const moves: Record<string, () => number> = {
    ArrowRight: () => step(1),
    ArrowUp: () => step(1),
    ArrowLeft: () => step(-1),
    ArrowDown: () => step(-1),
    PageUp: () => from + big,
    PageDown: () => from - big,
    Home: () => 0,
    End: () => count - 1,
  };
  const move = Object.hasOwn(moves, key) ? moves[key] : undefined;
  return move ? Math.min(count - 1, Math.max(0, move())) : null;
}

/** What the cursor reads at row `i` of the charts, in words: `At 2.35 km: pace 5:10 /km, heart rate 150 bpm`. */
export function readoutAt(data: Pick<ChartData, "x" | "xMode" | "distance" | "channels">, i: number): string {
  const values = data.channels.map((c) => {
    const v = c.values[i];
    return v === null || v === undefined ? `no ${c.label.toLowerCase()}` : `${c.label.toLowerCase()} ${c.format(v)}`;
  });
  return `At ${formatX(data.x[i]!, data.xMode, data.distance)}: ${values.join(", ")}`;
}
