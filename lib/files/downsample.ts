import { STREAM_KEYS, type StreamKey, type Streams } from "./types";

/** The most samples each streams resolution answers with (CONTRACT §11). */
export const RESOLUTIONS = { low: 100, medium: 1000, high: 10000, full: Infinity } as const satisfies Record<string, number>;

/*
 * Why Largest-Triangle-Three-Buckets (Steinarsson, "Downsampling Time Series for Visual
 * Representation", 2013), over every channel at once:
 *
 * - It keeps the shape a person sees: each bucket keeps the sample that makes the largest
 *   triangle with the sample kept before it and the average of the next bucket, so peaks,
 *   troughs and turns survive where taking every n-th sample or averaging would flatten a
 *   sprint's power spike or a summit's altitude. It only ever picks real samples, which the
 *   contract requires (no invented averages), and runs in one linear pass.
 * - The answer has one set of samples for all channels (they share `time_s`), so a sample's
 *   weight is the largest of its triangles over the channels, each channel first scaled to its
 *   own range (never less than a span that shows on a chart, MIN_SPAN) so watts do not drown
 *   out degrees of latitude. The largest, not the sum: with the
 *   sum, the small wiggles of eight noisy channels can outweigh one channel's real spike; with
 *   the largest, a sample where any one channel turns sharply is kept.
 * - Time is the x axis (scaled to 0..1), so a pause, a gap in time, counts as distance
 *   between samples, as it does on a chart against time.
 *
 * Min/max-per-bucket (M4) keeps extremes even more strictly but needs up to four samples per
 * bucket per channel, which with nine channels would not fit `max` points.
 * - One sample per bucket is one channel's choice: a bucket whose altitude low sits beside
 *   another channel's sharper turn lost the low (a ride's lowest point 10 m off at `low`). So
 *   each channel's highest and lowest sample is kept beside LTTB's choice, which is made among
 *   as many fewer buckets (`extremesOf`): the chart's range, and the peaks a person looks for,
 *   are the activity's own.
 */

/** One channel's values (latitude and longitude apart, each under `latlng`), NaN where it has none. */
export type Channel = { key: Exclude<StreamKey, "time_s">; values: Float64Array };

/**
 * Indices of the samples to keep: at most `max`, sorted, always the first and the last, chosen
 * by LTTB over every channel normalised (above). `max >= size` gives every index.
 */
export function sampleIndices(streams: Streams, max: number): number[] {
  return chooseSamples(streams.size, [max], () => ({ time: streams.time_s, channels: channelsOf(streams) }))[0]!;
}

/**
 * The same choice over columns of numbers, for each of `maxes`: `read` gives `time` (seconds,
 * one per sample) and the channels in STREAM_KEYS order, and is called once, only when there is
 * a choice to make; the channels are scaled once for every `max`. The stream codec reads its
 * stored integers this way, without building `Streams` first; the same numbers in give the same
 * samples out.
 */
export function chooseSamples(n: number, maxes: readonly number[], read: () => { time: ArrayLike<number>; channels: Channel[] }): number[][] {
  let columns: { x: Float64Array; series: Float64Array[]; extremes?: number[] } | undefined;
  return maxes.map((max) => {
    if (max >= n) return Array.from({ length: n }, (_, i) => i);
    if (!(max >= 2)) throw new RangeError(`sampleIndices: max must be at least 2, not ${max}`);
    const limit = Math.floor(max);
    if (limit === 2) return [0, n - 1];
    columns ??= normalised(n, read());
    // Each channel's extremes are kept, and LTTB chooses the rest among as many fewer buckets.
    const { x, series } = columns;
    const extremes = (columns.extremes ??= extremesOf(n, series));
    let rest = limit - extremes.length;
    if (rest < 2) return lttb(n, limit, x, series);
    const pick = (buckets: number) => mergeSorted(buckets === 2 ? [0, n - 1] : lttb(n, buckets, x, series), extremes);
    // Where LTTB took an extreme itself, the answer is short of `limit` by as many: LTTB gets
    // that many more buckets, as long as the answer still fits.
    let best = pick(rest);
    while (best.length < limit) {
      const more = pick(rest + limit - best.length);
      if (more.length <= limit && more.length > best.length) {
        rest += limit - best.length;
        best = more;
        continue;
      }
      // More buckets overshoot (or gain nothing): the places left go to samples LTTB chose with
      // them, then with `limit` buckets, in time order; the answer is then `limit` exactly.
      const have = new Set(best);
      const fill: number[] = [];
      for (const i of [...more, ...lttb(n, limit, x, series)]) {
        if (best.length + fill.length >= limit) break;
        if (!have.has(i)) {
          have.add(i);
          fill.push(i);
        }
      }
      return mergeSorted(best, fill.sort((a, b) => a - b));
    }
    return best;
  });
}

/** Time scaled to 0..1 (the x axis) and each channel scaled to its range. */
function normalised(n: number, { time: t, channels }: { time: ArrayLike<number>; channels: Channel[] }) {
  const x = new Float64Array(n);
  const span = (t[n - 1] ?? 0) - (t[0] ?? 0);
  for (let i = 0; i < n; i++) x[i] = span > 0 ? ((t[i] ?? 0) - (t[0] ?? 0)) / span : i / (n - 1);
  return { x, series: scaled(channels, n) };
}

/** LTTB's buckets: `limit` samples (at least 3) of `n`, over the normalised columns. */
function lttb(n: number, limit: number, x: Float64Array, series: Float64Array[]): number[] {
  const out: number[] = [0];
  const every = (n - 2) / (limit - 2);
  const bucketStart = (b: number) => Math.floor((b * (n - 2)) / (limit - 2)) + 1;
  let a = 0;
  const avg = new Float64Array(series.length);
  const areas = new Float64Array(Math.ceil(every) + 1);
  for (let b = 0; b < limit - 2; b++) {
    // Integer arithmetic: a float `b * every` can fall just short and drop a sample between buckets.
    const from = bucketStart(b);
    const to = b === limit - 3 ? n - 1 : bucketStart(b + 1);
    // The next bucket's average (the last sample alone after the final bucket).
    const nFrom = to;
    const nTo = b === limit - 3 ? n : bucketStart(b + 2);
    let avgX = 0;
    for (let i = nFrom; i < nTo; i++) avgX += x[i]!;
    avgX /= nTo - nFrom;
    for (let c = 0; c < series.length; c++) {
      const y = series[c]!;
      let sum = 0;
      let count = 0;
      for (let i = nFrom; i < nTo; i++) {
        const v = y[i]!;
        if (v === v) {
          sum += v;
          count++;
        }
      }
      avg[c] = count ? sum / count : Number.NaN;
    }

    // Channel by channel over the bucket: each series is read in order, once.
    const width = to - from;
    areas.fill(0, 0, width);
    const ax = x[a]!;
    for (let c = 0; c < series.length; c++) {
      const y = series[c]!;
      // A gap at the kept sample or over the whole next bucket (a sensor dropout) measures the
      // candidates against the level on the other side, so a spike beside a gap still counts.
      let ay = y[a]!;
      let cy = avg[c]!;
      if (ay !== ay) ay = cy;
      if (cy !== cy) cy = ay;
      if (ay !== ay) continue;
      const dx = ax - avgX;
      const dy = cy - ay;
      for (let k = 0; k < width; k++) {
        const by = y[from + k]!;
        if (by === by) {
          const area = Math.abs(dx * (by - ay) - (ax - x[from + k]!) * dy);
          if (area > areas[k]!) areas[k] = area;
        }
      }
    }
    let best = from;
    let bestArea = -1;
    for (let k = 0; k < width; k++) {
      if (areas[k]! > bestArea) {
        bestArea = areas[k]!;
        best = from + k;
      }
    }
    out.push(best);
    a = best;
  }
  out.push(n - 1);
  return out;
}

/**
 * Each channel's highest and lowest sample (its first of each), sorted and once each, leaving
 * out the first and last samples, which are always kept.
 */
function extremesOf(n: number, series: Float64Array[]): number[] {
  const found = new Set<number>();
  for (const y of series) {
    let lo = -1;
    let hi = -1;
    for (let i = 0; i < n; i++) {
      const v = y[i]!;
      if (v !== v) continue;
      if (lo < 0 || v < y[lo]!) lo = i;
      if (hi < 0 || v > y[hi]!) hi = i;
    }
    for (const e of [lo, hi]) if (e > 0 && e < n - 1) found.add(e);
  }
  return [...found].sort((a, b) => a - b);
}

/** Two sorted lists of indices as one, sorted, each index once. */
function mergeSorted(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (out[out.length - 1] !== next) out.push(next);
  }
  return out;
}

/**
 * The least span each channel is scaled over: a channel that barely moves (a ride whose
 * temperature goes from 18 to 19 °C) would otherwise have its one step scaled as large as a
 * sprint, and win buckets from real features. Roughly what a chart of each would show.
 */
const MIN_SPAN: Record<Exclude<StreamKey, "time_s">, number> = {
  latlng: 0.005, // about 500 m
  distance_m: 500,
  altitude_m: 50,
  speed_mps: 5,
  heart_rate_hz: 1, // 60 bpm
  cadence_hz: 1,
  power_w: 300,
  temperature_c: 10,
};

/** Each channel of `streams` as numbers, NaN where missing (latitude and longitude apart). */
function channelsOf(streams: Streams): Channel[] {
  const n = streams.size;
  const out: Channel[] = [];
  for (const key of STREAM_KEYS) {
    if (key === "time_s") continue;
    const values = streams[key];
    if (!values) continue;
    if (key === "latlng") {
      const lat = new Float64Array(n).fill(Number.NaN);
      const lng = new Float64Array(n).fill(Number.NaN);
      streams.latlng!.forEach((p, i) => {
        if (p) {
          lat[i] = p[0];
          lng[i] = p[1];
        }
      });
      out.push({ key, values: lat }, { key, values: lng });
    } else {
      const y = new Float64Array(n).fill(Number.NaN);
      (values as (number | null)[]).forEach((v, i) => {
        if (v != null) y[i] = v;
      });
      out.push({ key, values: y });
    }
  }
  return out;
}

/** Each channel scaled to its range (at least MIN_SPAN), in place; flat or empty ones left out. */
function scaled(channels: Channel[], n: number): Float64Array[] {
  const out: Float64Array[] = [];
  for (const { key, values: y } of channels) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = y[i]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (!(hi > lo)) continue; // flat or empty: no shape to keep
    const range = Math.max(hi - lo, MIN_SPAN[key]);
    for (let i = 0; i < n; i++) y[i] = (y[i]! - lo) / range;
    out.push(y);
  }
  return out;
}
