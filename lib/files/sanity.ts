import type { SportType } from "../activities/schemas";
import type { z } from "zod";
import { FileError, type Lap, type ParsedActivity, type ScalarStreamKey, type Streams, type Totals } from "./types";
import { firstCharacters, stripHiddenCharacters } from "../text";

// Everything a file states is checked here before it is trusted: each sample value against the
// range a body or a device can produce, each total against the limits a manual activity has
// (lib/activities/schemas.ts), and the counts a file may hold. A value out of range becomes null
// (one bad sensor reading must not cost the athlete the activity); only what the activity cannot
// exist without (its samples, an elapsed time within 30 days) fails the file.

export const LIMITS = {
  /** Samples in one file, all activities together: 23 days at 1 Hz. */
  samplesPerFile: 2_000_000,
  activitiesPerFile: 100,
  lapsPerActivity: 10_000,
  /** The manual-activity limits of lib/activities/schemas.ts, for the same columns. */
  elapsedS: 30 * 86_400,
  distanceM: 1_000_000,
  elevationGainM: 20_000,
  speedMps: 100,
  heartRateHz: 5,
  powerW: 3_000,
  energyJ: 100_000_000,
} as const;

/** Sample ranges outside which a value is a sensor fault or a sentinel, not a measurement. */
export const SAMPLE_RANGE = {
  heartRateBpm: [20, 300],
  speedMps: [0, 100],
  altitudeM: [-500, 9_000],
  powerW: [0, 3_000],
  temperatureC: [-60, 70],
  cadenceRpm: [0, 300],
  distanceM: [0, 1_000_000],
} as const;

/** Earliest and latest instants a sample may carry: FIT's epoch (1989-12-31) to a year ahead of now. */
const EARLIEST_S = Date.UTC(1989, 11, 31) / 1000;
const latestS = () => Date.now() / 1000 + 366 * 86_400;

/** `v` if it is a finite number within the range, else null. */
export const within = (v: number | null | undefined, [lo, hi]: readonly [number, number]): number | null =>
  v != null && Number.isFinite(v) && v >= lo && v <= hi ? v : null;

/** A latitude/longitude pair, or null when it is out of range or the (0, 0) writers put for "no fix". */
export function cleanPosition(lat: number | null | undefined, lng: number | null | undefined): [number, number] | null {
  if (lat == null || lng == null || !Number.isFinite(lat) || !Number.isFinite(lng)) return null;
  if (lat < -90 || lat > 90 || lng < -180 || lng > 180) return null;
  // Exactly zero is what recorders write without a fix (bad.tcx, many FIT files); a real track
  // hits an exact 0.0000000 so rarely that losing that one point costs nothing.
  if (lat === 0 || lng === 0) return null;
  return [lat, lng];
}

/** One sample as a file states it, in the file's units where they are common ones (bpm, rpm). */
export type RawSample = {
  /** Seconds since the Unix epoch (fractions allowed). */
  t: number;
  lat?: number | null;
  lng?: number | null;
  distanceM?: number | null;
  altitudeM?: number | null;
  speedMps?: number | null;
  heartRateBpm?: number | null;
  cadenceRpm?: number | null;
  powerW?: number | null;
  temperatureC?: number | null;
};

type Channel = ScalarStreamKey;
const SCALAR_CHANNELS: readonly Channel[] = [
  "distance_m",
  "altitude_m",
  "speed_mps",
  "heart_rate_hz",
  "cadence_hz",
  "power_w",
  "temperature_c",
];

/**
 * Shared by every activity of one file, so a file cannot exceed the cap by splitting its samples.
 * It also notes the samples refused for a time no recording can have (before FIT's epoch, or more
 * than a year ahead), and the earliest and latest of those times: a file that loses every sample
 * that way says why in those dates, not as a file without samples. (A FIT file's records may be
 * offered more than once, to a session and then to the whole file, so `refusedTimes` counts
 * refusals, not samples.)
 */
export class SampleBudget {
  used = 0;
  refusedTimes = 0;
  refusedFrom = Infinity;
  refusedTo = -Infinity;
  take() {
    if (++this.used > LIMITS.samplesPerFile) {
      throw new FileError(
        "invalid_file",
        `The file holds more than ${fmt(LIMITS.samplesPerFile)} samples, more than any real activity records.`,
      );
    }
  }
  /** The first time element whose text is no time (`17/05/2026 08:00`), as the file wrote it, shortened. */
  unreadableTime: string | null = null;
  unreadable(text: string) {
    this.unreadableTime ??= [...text.replace(/[^\x20-\x7e\u00a0-\u024f]+/g, " ").trim()].slice(0, 40).join("");
  }
  refuseTime(t: number) {
    this.refusedTimes++;
    if (!Number.isFinite(t)) return;
    if (t < this.refusedFrom) this.refusedFrom = t;
    if (t > this.refusedTo) this.refusedTo = t;
  }
}

/** An instant to the minute, `2024-05-01 08:00 UTC`; years past 9999 or before 1 as they are (not ISO's `+010000`). */
const utcMinute = (s: number) => {
  const d = new Date(Math.floor(s) * 1000);
  if (!Number.isFinite(d.getTime())) return `${fmt(s)} s after 1970`;
  const two = (n: number) => String(n).padStart(2, "0");
  const year = d.getUTCFullYear();
  return `${year < 0 ? "-" : ""}${String(Math.abs(year)).padStart(4, "0")}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
};

/**
 * The error for a file none of whose samples could be kept because of their times, naming those
 * times; null when no sample was refused for its time. Such a file is damaged rather than empty
 * (`invalid_file`): it recorded samples, but the device's clock gives them no instant they can have.
 */
export function refusedTimesError(budget: SampleBudget): FileError | null {
  if (budget.refusedTimes === 0) {
    if (budget.unreadableTime === null) return null;
    return new FileError(
      "invalid_file",
      `The file's times cannot be read (such as "${budget.unreadableTime}"): a time is written as 2024-05-17T08:00:00Z, or with an offset such as +02:00.`,
    );
  }
  const from = budget.refusedFrom;
  const to = budget.refusedTo;
  if (!Number.isFinite(from)) return new FileError("invalid_file", "No sample in the file has a valid time, so the activity cannot be placed in time.");
  const dates = utcMinute(from) === utcMinute(to) ? `dated ${utcMinute(from)}` : `dated from ${utcMinute(from)} to ${utcMinute(to)}`;
  const why =
    to < EARLIEST_S
      ? "before 1990: the recording device's clock was not set"
      : from > Date.now() / 1000
        ? "in the future: the recording device's clock was wrong"
        : "before 1990 or more than a year ahead: the recording device's clock was wrong";
  return new FileError("invalid_file", `Every sample in the file is ${dates}, ${why}, so the activity cannot be placed in time.`);
}

/** A forward gap, in seconds, past which the few samples after it may be taken for a clock glitch. */
const JUMP_S = 60;
/** At most this many samples after such a gap are dropped for one that goes back before them. */
const JUMPED_AHEAD_MAX = 10;

/**
 * Collects an activity's samples column by column. Samples must come in time order: one whose
 * timestamp goes backwards is dropped (a device clock jump or a file spliced from two
 * recordings; keeping it would make `time_s` decrease), unless the few samples before it had
 * jumped ahead and it carries on from before them: they are dropped instead (`dropJumpedAhead`).
 * One that repeats the previous timestamp is merged into it: some writers (Strava's, FIT) put
 * position and distance of one instant in two records, so the later record fills the channels
 * the earlier lacked; a device that records several times a second in whole-second timestamps
 * gives its power several times, and the sample holds their mean (the other channels are
 * readings at the instant: the first record's).
 */
/** The channels whose value over an instant's second is the mean of several records of that instant. */
const RATE_CHANNELS = ["power_w"] as const;
type RateChannel = (typeof RATE_CHANNELS)[number];

export class SampleBuilder {
  readonly t: number[] = [];
  readonly latlng: ([number, number] | null)[] = [];
  readonly ch: Record<Channel, (number | null)[]> = {
    distance_m: [],
    altitude_m: [],
    speed_mps: [],
    heart_rate_hz: [],
    cadence_hz: [],
    power_w: [],
    temperature_c: [],
  };
  /** Indices where a new segment starts after a pause (GPX trkseg, a timer stop): not moving time. */
  readonly breaks = new Set<number>();
  dropped = 0;
  /** Samples dropped from the start as strays (dropStrayEnds): what the file put at them begins after. */
  strayLeading = 0;
  private pendingBreak = false;
  private readonly latest = latestS();
  /** How many records gave each rate of the last sample (several records of one instant are averaged). */
  private readonly merged: Record<RateChannel, number> = { power_w: 0 };

  constructor(readonly budget: SampleBudget) {}

  get size() {
    return this.t.length;
  }

  /** The next sample starts a new segment (the recording was paused before it). */
  pause() {
    this.pendingBreak = true;
  }

  push(s: RawSample) {
    const t = s.t;
    if (!Number.isFinite(t) || t < EARLIEST_S || t > this.latest) {
      this.dropped++;
      this.budget.refuseTime(t);
      return;
    }
    const pos = cleanPosition(s.lat, s.lng);
    const ch = this.ch;
    const n = this.t.length;
    if (n > 0) {
      const last = this.t[n - 1]!;
      if (t < last) {
        // Either this sample is out of place, or the few before it were (`dropJumpedAhead`).
        if (this.dropJumpedAhead(t)) this.push(s);
        else this.dropped++;
        return;
      }
      if (t === last) {
        // A reading at the instant (where it is, how fast, the heart rate): the first record's.
        const fill = (k: Channel, v: number | null) => {
          if (ch[k][n - 1] === null) ch[k][n - 1] = v;
        };
        // The power over the instant's second, which its work and energy count: the mean of every
        // record that gives it (a power meter at 4 Hz alternating 100 and 300 W is 200 W).
        const average = (k: RateChannel, v: number | null) => {
          if (v === null) return;
          const before = ch[k][n - 1];
          const had = before == null ? 0 : Math.max(this.merged[k], 1);
          ch[k][n - 1] = before == null ? v : before + (v - before) / (had + 1);
          this.merged[k] = had + 1;
        };
        if (this.latlng[n - 1] === null) this.latlng[n - 1] = pos;
        fill("distance_m", within(s.distanceM, SAMPLE_RANGE.distanceM));
        fill("altitude_m", within(s.altitudeM, SAMPLE_RANGE.altitudeM));
        fill("speed_mps", within(s.speedMps, SAMPLE_RANGE.speedMps));
        fill("heart_rate_hz", hz(within(s.heartRateBpm, SAMPLE_RANGE.heartRateBpm)));
        fill("cadence_hz", hz(within(s.cadenceRpm, SAMPLE_RANGE.cadenceRpm)));
        average("power_w", within(s.powerW, SAMPLE_RANGE.powerW));
        fill("temperature_c", within(s.temperatureC, SAMPLE_RANGE.temperatureC));
        return;
      }
    }
    this.budget.take();
    if (this.pendingBreak && n > 0) this.breaks.add(n);
    this.pendingBreak = false;
    this.t.push(t);
    this.latlng.push(pos);
    ch.distance_m.push(within(s.distanceM, SAMPLE_RANGE.distanceM));
    ch.altitude_m.push(within(s.altitudeM, SAMPLE_RANGE.altitudeM));
    ch.speed_mps.push(within(s.speedMps, SAMPLE_RANGE.speedMps));
    ch.heart_rate_hz.push(hz(within(s.heartRateBpm, SAMPLE_RANGE.heartRateBpm)));
    ch.cadence_hz.push(hz(within(s.cadenceRpm, SAMPLE_RANGE.cadenceRpm)));
    ch.power_w.push(within(s.powerW, SAMPLE_RANGE.powerW));
    ch.temperature_c.push(within(s.temperatureC, SAMPLE_RANGE.temperatureC));
    for (const k of RATE_CHANNELS) this.merged[k] = ch[k][n] === null ? 0 : 1;
  }

  /**
   * A sample that goes back to before the last few means either it is out of place, and is
   * dropped, or they are: a GPS clock glitch stamps one sample (or a few) hours or days ahead,
   * and the samples after it carry on from where the track was. Kept, such a sample would have
   * every later one dropped as going backwards and made a long activity of a few samples. So
   * when `t` falls after the sample before a jump of over JUMP_S seconds among the last
   * JUMPED_AHEAD_MAX samples, the samples from the jump on are dropped instead (answers true:
   * `t` then goes after what is left). Otherwise (a late sample, two recordings spliced) false.
   */
  private dropJumpedAhead(t: number): boolean {
    const n = this.t.length;
    for (let j = n - 1; j >= Math.max(1, n - JUMPED_AHEAD_MAX); j--) {
      if (this.t[j - 1]! > t) continue;
      // t[j - 1] <= t < t[j]: the samples from j on are all later than t.
      if (this.t[j]! - this.t[j - 1]! <= JUMP_S) return false;
      // A pause before the first dropped sample is a pause before the sample that replaces it.
      const pausedAtCut = this.breaks.has(j);
      this.keep(0, j);
      if (pausedAtCut) this.pendingBreak = true;
      return true;
    }
    return false;
  }

  /**
   * A glitch at either end has nothing after (or before) it to show it up as `dropJumpedAhead`
   * does: a last sample stamped 300 days late, or a first one a year early, would make the
   * activity last longer than any can, and fail the file. When the samples span more than
   * `maxSpanS`, up to JUMPED_AHEAD_MAX samples at the end and up to as many at the start, each
   * group beyond a forward gap of over JUMP_S seconds, are dropped if that brings the span within
   * it, fewest first, and only while what stays outnumbers what goes. Two real recordings far
   * apart (more than a few samples on each side) stay, and fail as they did. How many were
   * dropped from the start is added to `strayLeading`.
   */
  dropStrayEnds(maxSpanS: number): void {
    const t = this.t;
    const n = t.length;
    if (n < 2 || t[n - 1]! - t[0]! <= maxSpanS) return;
    // Where the recording may be cut: just after the strays at its start, just before those at its end.
    const froms = [0];
    for (let j = 1; j <= Math.min(JUMPED_AHEAD_MAX, n - 1); j++) if (t[j]! - t[j - 1]! > JUMP_S) froms.push(j);
    const tos = [n];
    for (let j = n - 1; j >= Math.max(1, n - JUMPED_AHEAD_MAX); j--) if (t[j]! - t[j - 1]! > JUMP_S) tos.push(j);
    let best: [number, number] | null = null;
    for (const from of froms) {
      for (const to of tos) {
        const kept = to - from;
        if (kept < 1 || 2 * kept <= n || t[to - 1]! - t[from]! > maxSpanS) continue;
        if (!best || kept > best[1] - best[0]) best = [from, to];
      }
    }
    if (!best) return;
    this.keep(best[0], best[1]);
    this.strayLeading += best[0];
  }

  /** Keeps samples `from` to `to` (exclusive), the pauses among them with them; the rest count as dropped. */
  private keep(from: number, to: number): void {
    const n = this.t.length;
    this.dropped += n - (to - from);
    const cut = <T,>(xs: T[]) => {
      // From the start, a cut is a truncation: no copy (dropJumpedAhead cuts so, perhaps often).
      if (from > 0) xs.copyWithin(0, from, to);
      xs.length = to - from;
    };
    cut(this.t);
    cut(this.latlng);
    for (const k of SCALAR_CHANNELS) cut(this.ch[k]);
    if (from === 0) {
      // A truncation leaves the pauses before `to` where they are: only the few cut off go (a
      // file of 20,000 segments, each with a sample days ahead, rebuilt every pause for each
      // and held the file worker past its minute).
      for (let b = to; b < n; b++) this.breaks.delete(b);
      return;
    }
    const breaks = [...this.breaks];
    this.breaks.clear();
    for (const b of breaks) if (b > from && b < to) this.breaks.add(b - from);
  }

  /**
   * The streams: `time_s` from the first sample, a channel only where the file recorded at least
   * one value of it. `distance_m` counts from the activity's own start (`fromActivityStart`).
   * Without a distance channel but with positions, distance is the cumulative great-circle length
   * of the track.
   */
  streams(): Streams {
    const n = this.t.length;
    const t0 = this.t[0] ?? 0;
    const time = new Array<number>(n);
    for (let i = 0; i < n; i++) time[i] = round3(this.t[i]! - t0);
    const out: Streams = { size: n, time_s: time };
    const latlng = withoutPositionFaults(this.t, this.latlng, this.breaks);
    const hasPos = latlng.some((p) => p !== null);
    if (hasPos) out.latlng = latlng;
    for (const k of SCALAR_CHANNELS) {
      if (this.ch[k].some((v) => v !== null)) out[k] = this.ch[k];
    }
    if (out.distance_m) out.distance_m = withoutDistanceFaults(this.t, out.distance_m);
    if (out.distance_m) out.distance_m = fromActivityStart(out.distance_m);
    if (!out.distance_m && hasPos) out.distance_m = trackDistance(this.t, latlng, this.breaks);
    return out;
  }
}

const hz = (perMinute: number | null) => (perMinute === null ? null : perMinute / 60);
const round3 = (v: number) => Math.round(v * 1000) / 1000;
const fmt = (n: number) => n.toLocaleString("en-US");

const EARTH_RADIUS_M = 6_371_008.8;
const METRES_PER_DEGREE = (EARTH_RADIUS_M * Math.PI) / 180;
/** Great-circle distance (haversine) in metres. */
export function haversine(a: [number, number], b: [number, number]): number {
  const toRad = Math.PI / 180;
  const dLat = (b[0] - a[0]) * toRad;
  const dLng = (b[1] - a[1]) * toRad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[0] * toRad) * Math.cos(b[0] * toRad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * Whether moving from fix `a` to fix `b` is something an activity can do: no faster than the
 * fastest speed an activity may have (LIMITS.speedMps), over at least a second (fixes of one
 * second are a few metres apart, and two may share a second).
 */
function plausibleStep(t: number[], latlng: ([number, number] | null)[], a: number, b: number): boolean {
  const p = latlng[a]!;
  const q = latlng[b]!;
  const reach = LIMITS.speedMps * Math.max(1, t[b]! - t[a]!);
  // No great circle is longer than going along the meridian and then the parallel, each at most
  // its degrees' length on the equator: a fix within that of the last needs no haversine.
  if ((Math.abs(q[0] - p[0]) + Math.abs(q[1] - p[1])) * METRES_PER_DEGREE <= reach) return true;
  return haversine(p, q) <= reach;
}

/**
 * The positions without the fixes a receiver got wrong. A fix that lies out of reach of both the
 * fix before it and the one after it (hundreds of metres to kilometres away within a second or
 * two), while those two lie within reach of each other, is a fault of that one fix: it becomes
 * null, so the route does not spike to it and the distance does not count the way there and
 * back (one such fix made a 10 km run 465 km long). So does a first fix out of reach of a track
 * that agrees with itself after it (a cold start's first fix), and a last fix out of reach of the
 * track before it. Positions across a pause are not compared: the athlete may have travelled.
 */
function withoutPositionFaults(t: number[], latlng: ([number, number] | null)[], breaks: ReadonlySet<number>): ([number, number] | null)[] {
  const n = latlng.length;
  // The next fix after each index, found as they are needed (each run of samples without a fix
  // is walked once).
  let nextFrom = -1;
  let nextAt = -1;
  const nextFix = (i: number): number => {
    if (nextFrom !== i) {
      nextFrom = i;
      nextAt = i + 1;
      while (nextAt < n && latlng[nextAt] === null) nextAt++;
    }
    return nextAt < n ? nextAt : -1;
  };
  // Whether a pause lies between indices a (exclusive) and b (inclusive).
  const pauses = [...breaks].sort((x, y) => x - y);
  const pausedBetween = (a: number, b: number) => {
    const k = lowerBound(pauses, a + 1);
    return k < pauses.length && pauses[k]! <= b;
  };
  const reach = (a: number, b: number) => plausibleStep(t, latlng, a, b) || pausedBetween(a, b);
  let out: ([number, number] | null)[] | null = null;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    if (latlng[i] === null) continue;
    const next = nextFix(i);
    let fault = false;
    if (prev >= 0 && !reach(prev, i)) {
      // Out of reach of the track so far: a fault if the next fix is not, or if there is none.
      fault = next < 0 || (!reach(i, next) && reach(prev, next));
    } else if (prev < 0 && next >= 0 && !reach(i, next)) {
      // The first fix, out of reach of the next, which the one after it agrees with.
      const after = nextFix(next);
      fault = after >= 0 && reach(next, after);
    }
    if (fault) {
      out ??= latlng.slice();
      out[i] = null;
      continue;
    }
    prev = i;
  }
  return out ?? latlng;
}

/**
 * Cumulative distance along the positions; a sample without one keeps the distance so far. The
 * gap across a pause is not counted: it is not moving time either, and counting one without the
 * other would make the average speed absurd. Nor is a step no activity can make (the track moved
 * on after a receiver's fault, `plausibleStep`): the track carries on from where it now is.
 */
function trackDistance(t: number[], latlng: ([number, number] | null)[], breaks: ReadonlySet<number>): (number | null)[] {
  const out = new Array<number | null>(latlng.length);
  let total = 0;
  let prev = -1;
  for (let i = 0; i < latlng.length; i++) {
    if (breaks.has(i)) prev = -1;
    if (latlng[i]) {
      if (prev >= 0 && plausibleStep(t, latlng, prev, i)) total += haversine(latlng[prev]!, latlng[i]!);
      prev = i;
    }
    out[i] = prev >= 0 ? Math.round(total * 100) / 100 : null;
  }
  return out;
}

/** At most this many distance values in a row out of reach of the ones around them are the device's fault. */
const DISTANCE_FAULT_RUN = 10;
/** For this many readings after a lasting fall, a jump back to the level before it makes the fall a dropout (`withoutDistanceFaults`). */
const DISTANCE_DROPOUT = 300;

/** How far a device's distance may go back between samples: a correction, not a reset. */
const DISTANCE_BACK_M = 10;

/**
 * Whether a device's distance can go from sample `a` to `b`: forward by no more than
 * LIMITS.speedMps allows, back by no more than DISTANCE_BACK_M (a distance only adds up).
 */
function distanceStep(t: number[], d: (number | null)[], a: number, b: number): boolean {
  const step = d[b]! - d[a]!;
  return step >= -DISTANCE_BACK_M && step <= LIMITS.speedMps * Math.max(1, t[b]! - t[a]!);
}

/**
 * A device's distance without the readings it got wrong, as positions are cleaned
 * (`withoutPositionFaults`): a run of up to DISTANCE_FAULT_RUN values out of reach of the value
 * before it, followed by one within reach of that value, is a fault of those values (one reading
 * of 999 km in a 10 km run made the run 999 km long); so is a first value out of reach of the
 * next two, which agree, and a run at the end that never comes back. They become null. A jump
 * that lasts (a counter reset, or a channel that is no distance at all) stays as recorded and is
 * not counted in a total (`distanceCovered`). Null when no value is left.
 */
function withoutDistanceFaults(t: number[], d: (number | null)[]): (number | null)[] | undefined {
  const at: number[] = [];
  for (let i = 0; i < d.length; i++) if (d[i] != null) at.push(i);
  const m = at.length;
  const reach = (a: number, b: number) => distanceStep(t, d, at[a]!, at[b]!);
  let out: (number | null)[] | null = null;
  const drop = (from: number, to: number) => {
    const o = (out ??= d.slice());
    for (let k = from; k < to; k++) o[at[k]!] = null;
  };
  let prev = 0;
  if (m >= 3 && !reach(0, 1) && !reach(0, 2) && reach(1, 2)) {
    drop(0, 1);
    prev = 1;
  }
  // A lasting fall taken as the new level (a reset, or a dropout longer than a fault's run):
  // the reading before it and where it began, for DISTANCE_DROPOUT readings. A jump back to
  // that reading's level within them ends a dropout: the readings since the fall were the fault.
  // (Taken as a reset, 12 readings of 0 and then the distance again counted the way back up.)
  let fall: { before: number; from: number } | null = null;
  for (let k = prev + 1; k < m; k++) {
    if (reach(prev, k)) {
      prev = k;
      continue;
    }
    if (fall && k - fall.from <= DISTANCE_DROPOUT && reach(fall.before, k)) {
      drop(fall.from, k);
      prev = k;
      fall = null;
      continue;
    }
    let back = -1;
    for (let q = k + 1; q < m && q <= k + DISTANCE_FAULT_RUN; q++) {
      if (reach(prev, q)) {
        back = q;
        break;
      }
    }
    if (back >= 0) {
      drop(k, back);
      prev = back;
      k = back;
    } else if (m - k <= DISTANCE_FAULT_RUN) {
      drop(k, m);
      break;
    } else {
      if (d[at[k]!]! < d[at[prev]!]!) fall = { before: prev, from: k };
      prev = k;
    }
  }
  const cleaned: (number | null)[] = out ?? d;
  return cleaned.some((v) => v !== null) ? cleaned : undefined;
}

/**
 * A device's distance counted from the activity's first sample, as `time_s` is: each value less
 * the least the activity recorded, which is its first unless the device took a few metres back
 * after it. A device counts from when it began recording, so a later session of a multisport
 * FIT file (the ride after the swim) carried on from the legs before it, and a TCX file whose
 * laps began before its first trackpoint (tour_hr.tcx) started its distance at 2,604 m, while
 * the OpenAPI says distance_m is the distance covered since the start.
 *
 * Not the running distance where a FIT session began (the last record at or before its
 * start_time), though that also counts the metres between start_time and the session's first
 * record: `time_s` and the laps' `start_offset_s` count from the first sample, and distance_m
 * from the same sample pairs 0 m with 0 s; GPX and TCX start at their first point and have no
 * way to say metres covered before it, so a stream that began above 0 would not read back the
 * same from their exports; and that record is another activity's (the leg before), whose fault
 * or counter reset the session's own samples do not show. The least value rather than the first:
 * a value below 0 no sample may hold (SAMPLE_RANGE) and no export writes, and counted from it
 * again the stream is the same, so an export read back gives the same stream. A counter that
 * resets to 0 within the activity (a lasting fall, kept as recorded) leaves it as it was.
 *
 * Totals and laps are unchanged: what samples cover is the difference of their values
 * (`distanceCovered`), and a file's own totals are what it states.
 */
function fromActivityStart(d: (number | null)[]): (number | null)[] {
  let least = Infinity;
  for (const v of d) if (v !== null && v < least) least = v;
  if (!(least > 0) || !Number.isFinite(least)) return d;
  return d.map((v) => (v === null ? null : v - least));
}

/**
 * The distance covered over samples `from`..`to` (inclusive): the steps between recorded values
 * added up, leaving out a step no activity can make (`distanceStep`), so a counter that jumped or
 * reset carries on from where it now is. Null without a value.
 */
function distanceCovered(t: number[], d: (number | null)[], from: number, to: number): number | null {
  // Added up a stretch at a time (its last value less its first), so that without a jump the
  // total is exactly the last value less the first.
  let total = 0;
  let first = -1;
  let prev = -1;
  for (let i = from; i <= to; i++) {
    if (d[i] == null) continue;
    if (first < 0) first = i;
    else if (!distanceStep(t, d, prev, i)) {
      total += d[prev]! - d[first]!;
      first = i;
    }
    prev = i;
  }
  return prev < 0 ? null : Math.max(0, total + d[prev]! - d[first]!);
}

/** Below this speed an interval counts as standing still (a slow walk is ~1 m/s). */
const MOVING_MPS = 0.3;
/** How long past its samples a file's stated elapsed time may run beyond as long again as they span (a recording that lost its points). */
const UNRECORDED_MAX_S = 3 * 3_600;
/** Without any channel that shows movement, a gap longer than this is a pause. */
const MAX_SILENT_GAP_S = 60;
/**
 * A sample's own speed, power or cadence speaks for the seconds before it up to this long (the
 * longest step of a device's smart recording). After a longer gap it tells only how the athlete
 * set off again, not what they did in it: there the distance covered across the gap decides
 * (a runner who stood still for 30 minutes and left at 84 spm did not move for 30 minutes);
 * without a distance, the sample still speaks for a gap up to `MAX_SILENT_GAP_S`, and a longer
 * one is a pause.
 */
const POINT_EVIDENCE_S = 10;
/** Altitude must move this far from the last turning point to count: GPS and barometer noise. */
const ELEVATION_HYSTERESIS_M = 3;
/** Metabolic energy from mechanical work at a gross efficiency of about 24% (1 kJ of work ≈ 1 kcal). */
const WORK_TO_ENERGY = 1 / 0.239;

/** Totals computed from samples `from`..`to` (inclusive). */
export function summarize(streams: Streams, breaks: ReadonlySet<number>, from: number, to: number): Omit<Totals, "elapsedTimeS"> & { elapsedTimeS: number } {
  const t = streams.time_s;
  const dist = streams.distance_m;
  const speed = streams.speed_mps;
  const power = streams.power_w;
  const cadence = streams.cadence_hz;
  let moving = 0;
  for (let i = from + 1; i <= to; i++) {
    const dt = t[i]! - t[i - 1]!;
    if (dt <= 0 || breaks.has(i)) continue;
    let evidence = false;
    let moved = false;
    const d1 = dist?.[i];
    const d0 = dist?.[i - 1];
    if (d1 != null && d0 != null) {
      evidence = true;
      if ((d1 - d0) / dt >= MOVING_MPS) moved = true;
    }
    if (dt <= POINT_EVIDENCE_S || (!evidence && dt <= MAX_SILENT_GAP_S)) {
      const v = speed?.[i];
      if (v != null) {
        evidence = true;
        if (v >= MOVING_MPS) moved = true;
      }
      const p = power?.[i];
      if (p != null) {
        evidence = true;
        if (p > 0) moved = true;
      }
      const c = cadence?.[i];
      if (c != null) {
        evidence = true;
        if (c > 0) moved = true;
      }
    }
    if (evidence ? moved : dt <= MAX_SILENT_GAP_S) moving += dt;
  }
  const work = mechanicalWorkJ(streams, breaks, from, to);
  return {
    elapsedTimeS: t[to]! - t[from]!,
    movingTimeS: moving,
    distanceM: dist ? distanceCovered(t, dist, from, to) : null,
    elevationGainM: streams.altitude_m ? elevationGain(streams.altitude_m, breaks, from, to) : null,
    averageSpeedMps: null,
    maxSpeedMps: speed ? max(speed, from, to) : null,
    averageHeartRateHz: streams.heart_rate_hz ? mean(streams.heart_rate_hz, from, to) : null,
    maxHeartRateHz: streams.heart_rate_hz ? max(streams.heart_rate_hz, from, to) : null,
    averagePowerW: power ? mean(power, from, to) : null,
    energyJ: work === null ? null : work * WORK_TO_ENERGY,
  };
}

/**
 * The mechanical work of samples `from`..`to` (inclusive), in joules: each power sample times the
 * time since the sample before it, across neither a pause nor a silence over MAX_SILENT_GAP_S.
 * Null without a power sample to count. What a FIT file calls total_work; the activity's
 * `energy_j` is the metabolic energy it took (`summarize`).
 */
export function mechanicalWorkJ(streams: Streams, breaks: ReadonlySet<number>, from: number, to: number): number | null {
  const t = streams.time_s;
  const power = streams.power_w;
  if (!power) return null;
  let work = 0;
  let seen = false;
  for (let i = from + 1; i <= to; i++) {
    const p = power[i];
    const dt = t[i]! - t[i - 1]!;
    if (p == null || dt <= 0 || dt > MAX_SILENT_GAP_S || breaks.has(i)) continue;
    work += p * dt;
    seen = true;
  }
  return seen ? work : null;
}

/**
 * The mean of the values in from..to, never outside their least and greatest: a sum of floats
 * rounds, and 3,600 heart rates of 140/60 Hz averaged a hair above 140/60, which made the
 * maximum "contradict" the average and be dropped.
 */
function mean(v: (number | null)[], from: number, to: number): number | null {
  let sum = 0;
  let n = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = from; i <= to; i++) {
    const x = v[i];
    if (x == null) continue;
    sum += x;
    n++;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return n ? Math.min(hi, Math.max(lo, sum / n)) : null;
}

function max(v: (number | null)[], from: number, to: number): number | null {
  let m: number | null = null;
  for (let i = from; i <= to; i++) {
    const x = v[i];
    if (x != null && (m === null || x > m)) m = x;
  }
  return m;
}

function elevationGain(alt: (number | null)[], breaks: ReadonlySet<number>, from: number, to: number): number | null {
  let gain = 0;
  let ref: number | null = null;
  let seen = false;
  let paused = false;
  for (let i = from; i <= to; i++) {
    if (breaks.has(i)) paused = true;
    const a = alt[i];
    if (a == null) continue;
    seen = true;
    // What the way up across a pause was (a lift, a car) is not climbed, as its distance is not run.
    if (ref === null || paused) ref = a;
    else if (a - ref >= ELEVATION_HYSTERESIS_M) {
      gain += a - ref;
      ref = a;
    } else if (ref - a >= ELEVATION_HYSTERESIS_M) ref = a;
    paused = false;
  }
  return seen ? gain : null;
}

/** Totals as a file states them; anything absent is computed from the samples instead. */
export type Declared = Partial<{ [K in keyof Totals]: number | null | undefined }> & {
  /**
   * An average speed the file says the service derived from distance and time rather than
   * measured (this service's own FIT export, whose average was above its maximum): the activity's
   * average as a derived one is, not held to the maximum (merge).
   */
  derivedAverageSpeedMps?: number | null;
};

/** A lap as a file states it: where it starts (Unix seconds) and whatever totals it carries. */
export type DeclaredLap = { startS: number; endS?: number | null; totals: Declared };

const check = (v: number | null | undefined, lo: number, hi: number, loExclusive = false) =>
  v != null && Number.isFinite(v) && (loExclusive ? v > lo : v >= lo) && v <= hi ? v : null;

/** Declared totals within the manual-activity limits; an absurd one is null, to be computed instead. */
function cleanDeclared(d: Declared): Declared {
  return {
    elapsedTimeS: check(d.elapsedTimeS, 0, LIMITS.elapsedS),
    movingTimeS: check(d.movingTimeS, 0, LIMITS.elapsedS),
    distanceM: check(d.distanceM, 0, LIMITS.distanceM),
    elevationGainM: check(d.elevationGainM, 0, LIMITS.elevationGainM),
    averageSpeedMps: check(d.averageSpeedMps, 0, LIMITS.speedMps),
    derivedAverageSpeedMps: check(d.derivedAverageSpeedMps, 0, LIMITS.speedMps),
    maxSpeedMps: check(d.maxSpeedMps, 0, LIMITS.speedMps),
    averageHeartRateHz: check(d.averageHeartRateHz, 0, LIMITS.heartRateHz, true),
    maxHeartRateHz: check(d.maxHeartRateHz, 0, LIMITS.heartRateHz, true),
    averagePowerW: check(d.averagePowerW, 0, LIMITS.powerW),
    energyJ: check(d.energyJ, 0, LIMITS.energyJ),
  };
}

/**
 * A total of 0 for a channel the samples never recorded is the device saying "no sensor", not a
 * measurement (an indoor ride's FIT session gives distance 0; a treadmill's TCX lap its maximum
 * speed and its average watts as 0): CONTRACT §11 wants null there, whichever format said it.
 */
function withoutUnrecorded(d: Declared, recorded: Recorded): Declared {
  const zeroToNull = (v: number | null | undefined, isRecorded: boolean) => (v === 0 && !isRecorded ? null : v);
  return {
    ...d,
    distanceM: zeroToNull(d.distanceM, recorded.movement),
    averageSpeedMps: zeroToNull(d.averageSpeedMps, recorded.movement),
    derivedAverageSpeedMps: zeroToNull(d.derivedAverageSpeedMps, recorded.movement),
    maxSpeedMps: zeroToNull(d.maxSpeedMps, recorded.movement),
    elevationGainM: zeroToNull(d.elevationGainM, recorded.altitude),
    averageHeartRateHz: zeroToNull(d.averageHeartRateHz, recorded.heartRate),
    maxHeartRateHz: zeroToNull(d.maxHeartRateHz, recorded.heartRate),
    averagePowerW: zeroToNull(d.averagePowerW, recorded.power),
  };
}

/** Which channels the samples recorded: looked up once per activity, for it and every lap. */
type Recorded = { movement: boolean; altitude: boolean; heartRate: boolean; power: boolean };

function recordedChannels(streams: Streams): Recorded {
  // streams() keeps a channel only where it holds a value (distance also from positions).
  return {
    movement: !!(streams.distance_m || streams.speed_mps || streams.latlng),
    altitude: !!streams.altitude_m,
    heartRate: !!streams.heart_rate_hz,
    power: !!streams.power_w,
  };
}

/** File's value first, else the computed one, and either only within the limits. */
function merge(declared: Declared, computed: ReturnType<typeof summarize>): Omit<Totals, "elapsedTimeS"> & { elapsedTimeS: number } {
  const c = cleanDeclared(computed);
  const d = withoutContradictedZeros(cleanDeclared(declared), c);
  const pick = <K extends keyof Totals>(k: K) => d[k] ?? c[k] ?? null;
  // A stated time that runs past the samples by more than they span, and by over three hours, is
  // not one they were recorded in (a minute of trackpoints in a TCX lap of 2,000,000 s: 23 days).
  const span = Math.max(0, computed.elapsedTimeS);
  const elapsed = d.elapsedTimeS != null && d.elapsedTimeS <= span + Math.max(span, UNRECORDED_MAX_S) ? d.elapsedTimeS : span;
  const clamp = (m: number | null | undefined) => (m != null && m > elapsed ? elapsed : (m ?? null));
  let moving = clamp(pick("movingTimeS"));
  let distance = pick("distanceM");
  // A distance its time could not cover (999,999 m in a minute) contradicts the file: the API
  // refuses such an activity (derivedAverageSpeed), and would refuse every change to its times.
  // The samples' moving time is tried (the stated one may be what is off), then their distance,
  // then none.
  const covers = (dist: number | null, m: number | null) => dist === null || !((m || elapsed) > 0) || dist / (m || elapsed) <= LIMITS.speedMps;
  if (!covers(distance, moving)) {
    const sampledMoving = clamp(c.movingTimeS);
    if (covers(distance, sampledMoving)) moving = sampledMoving;
    else distance = covers(c.distanceM ?? null, moving) ? (c.distanceM ?? null) : null;
  }
  const time = moving || elapsed;
  // An average speed of 0 over a distance covered in some time is one the writer did not compute.
  if (d.averageSpeedMps === 0 && distance !== null && distance > 0 && time > 0) d.averageSpeedMps = null;
  // One the file says the service derived (its own FIT export) is the one it derived then: the
  // distance and time it was taken over were kept rounded, and over those it could come out apart.
  const derivedSpeed = d.derivedAverageSpeedMps ?? (distance !== null && time > 0 ? check(distance / time, 0, LIMITS.speedMps) : null);
  const avgSpeed = d.averageSpeedMps ?? derivedSpeed;
  const speed = inOrderOr([d.averageSpeedMps ?? null, pick("maxSpeedMps")], [derivedSpeed, c.maxSpeedMps ?? null]);
  const heartRate = inOrderOr([pick("averageHeartRateHz"), pick("maxHeartRateHz")], [c.averageHeartRateHz ?? null, c.maxHeartRateHz ?? null]);
  return {
    elapsedTimeS: elapsed,
    movingTimeS: moving,
    distanceM: distance,
    elevationGainM: pick("elevationGainM"),
    // An average the file did not state, from distance over time, is not held to the maximum (as a manual activity's is not).
    averageSpeedMps: d.averageSpeedMps != null ? speed[0] : avgSpeed,
    maxSpeedMps: speed[1],
    averageHeartRateHz: heartRate[0],
    maxHeartRateHz: heartRate[1],
    averagePowerW: pick("averagePowerW"),
    energyJ: pick("energyJ"),
  };
}

/** Totals some writers give as 0 for "not computed" (every one of them in one session), though the samples hold the channel. */
const ZERO_WHEN_NOT_COMPUTED = ["maxSpeedMps", "averageHeartRateHz", "maxHeartRateHz", "averagePowerW", "energyJ"] as const;

/**
 * The declared totals without a 0 that the samples contradict: a maximum speed, a heart rate, an
 * average power or an energy of 0 where the samples give that total above 0 is the writer's
 * "not computed" (a session with `avg_power` 0 over an hour of 200 W records), and the samples'
 * total is taken instead. A 0 for a channel the samples never recorded is `withoutUnrecorded`'s.
 * A maximum speed of 0 beside a stated distance of 0 was computed (no distance, no speed) where
 * the samples covered none either: a pool swim's rest lap says so, and the one sample it shares
 * with the length before (the instant the rest began) gave it that length's speed. A writer's
 * zeros over an hour of riding are its "not computed", the maximum speed's too.
 */
const STILL_M = 1;
function withoutContradictedZeros(d: Declared, sampled: Declared): Declared {
  const out = { ...d };
  for (const k of ZERO_WHEN_NOT_COMPUTED) {
    if (k === "maxSpeedMps" && d.distanceM === 0 && !((sampled.distanceM ?? 0) > STILL_M)) continue;
    if (d[k] === 0 && (sampled[k] ?? 0) > 0) out[k] = null;
  }
  return out;
}

/**
 * An average and a maximum that hold together (the maximum not below the average, as the API
 * holds a manual activity's: ORDERED_PAIRS). A file whose own totals say otherwise (a session
 * with an average heart rate of 250 and a maximum of 10) contradicts itself: the samples' pair is
 * taken instead where they have one that holds, else the average alone. Stored as the file said,
 * the pair made every later change to either member a 400.
 */
function inOrderOr([average, max]: [number | null, number | null], [sampledAverage, sampledMax]: [number | null, number | null]): [number | null, number | null] {
  if (average === null || max === null || average <= max) return [average, max];
  if (sampledAverage !== null && sampledMax !== null && sampledAverage <= sampledMax) return [sampledAverage, sampledMax];
  return [average, null];
}

/** A lap's length as its file states it: its elapsed time, else from its start to its end; -1 if neither. */
const statedLength = (l: DeclaredLap) => l.totals.elapsedTimeS ?? (l.endS != null ? l.endS - l.startS : null) ?? -1;

/**
 * Of two laps that start at the same instant, whether `b` rather than `a` is the lap. Lap starts
 * are whole seconds in FIT and mostly in TCX, so of two laps that share a start the first lasted
 * under a second: the lap button pressed as the recording began, or an empty lap a device writes
 * at the start. What the athlete sees as the lap is the one that holds the time and the distance
 * (a 900 m lap, not the 0.4 s before it), so the longer is kept: by the time the file states,
 * then its timer time, then its distance. A lap written twice as it was (bad.tcx repeats its only
 * lap) is the same lap either way, and the first is kept.
 */
export function fullerLap(a: DeclaredLap, b: DeclaredLap): boolean {
  const keys = (l: DeclaredLap) => [statedLength(l), l.totals.movingTimeS ?? -1, l.totals.distanceM ?? -1];
  const ka = keys(a);
  const kb = keys(b);
  for (let k = 0; k < ka.length; k++) if (kb[k] !== ka[k]) return kb[k]! > ka[k]!;
  return false;
}

/** Where a lap ends as its file states it (its end, else its start plus its elapsed time), or null. */
const declaredEndOf = (l: DeclaredLap) => l.endS ?? (l.totals.elapsedTimeS != null ? l.startS + l.totals.elapsedTimeS : null);

/** First index of the sorted `t` whose value is ≥ `s` (sample times, pause indices). */
function lowerBound(t: number[], s: number): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Builds a checked activity from its samples and what the file declares. Throws `invalid_file`
 * when what remains cannot be a valid activity (elapsed time over 30 days).
 */
export function finishActivity(input: {
  sport: z.output<typeof SportType>;
  /** Unix seconds; default the first sample. */
  startS?: number | null;
  name: string | null;
  samples: SampleBuilder;
  declared: Declared;
  laps: DeclaredLap[];
  /** Which activity of the file this is (1-based), for messages. */
  ordinal: number;
}): ParsedActivity {
  const { samples } = input;
  if (samples.size === 0) {
    // Every sample was refused (for its time, most often): there is no activity, and nothing
    // below would have a first sample to count from.
    throw refusedTimesError(samples.budget) ?? noActivityData("The file holds no timed samples, so there is no activity to make.");
  }
  // A file that itself says the activity lasted longer than any may is taken at its word.
  const declaredElapsed = input.declared.elapsedTimeS;
  if (!(declaredElapsed != null && declaredElapsed > LIMITS.elapsedS)) samples.dropStrayEnds(LIMITS.elapsedS);
  const droppedLeading = samples.strayLeading > 0;
  const streams = samples.streams();
  const n = streams.size;
  const t0 = samples.t[0]!;
  // With strays dropped from the start, a start or a lap the file put among them begins with what
  // is left (a lap wholly among them is none of the activity's), its end where it was.
  const declaredStart = input.startS != null && Number.isFinite(input.startS) ? input.startS : t0;
  const startS = droppedLeading ? Math.max(declaredStart, t0) : declaredStart;
  const declaredLaps =
    droppedLeading
      ? input.laps.flatMap((l): DeclaredLap[] => {
          if (!(l.startS < t0)) return [l];
          const end = declaredEndOf(l);
          return end !== null && end <= t0 ? [] : [{ ...l, startS: t0, endS: end }];
        })
      : input.laps;
  const computed = summarize(streams, samples.breaks, 0, n - 1);
  const recorded = recordedChannels(streams);
  const totals = merge(withoutUnrecorded(input.declared, recorded), computed);
  if (totals.elapsedTimeS > LIMITS.elapsedS) {
    throw new FileError(
      "invalid_file",
      `${input.ordinal > 1 ? `Activity ${input.ordinal} of the file` : "The activity"} lasts ${fmt(Math.round(totals.elapsedTimeS / 86_400))} days; an activity can last at most 30.`,
    );
  }
  // A file whose only sample is one instant still took that second.
  totals.elapsedTimeS = Math.max(1, Math.round(totals.elapsedTimeS));
  if (totals.movingTimeS !== null) totals.movingTimeS = Math.min(totals.elapsedTimeS, Math.round(totals.movingTimeS));

  if (input.laps.length > LIMITS.lapsPerActivity) {
    throw new FileError("invalid_file", `The file declares ${fmt(input.laps.length)} laps in one activity; at most ${fmt(LIMITS.lapsPerActivity)} are accepted.`);
  }
  const laps: Lap[] = [];
  // A lap that starts after its activity ended is none of its laps (a TCX lap whose StartTime
  // says 2099 beside trackpoints of 2026 came out at an offset of 72 years, lasting 0 s).
  const activityEnd = Math.max(startS + totals.elapsedTimeS, samples.t[n - 1]!);
  const sorted = [...declaredLaps].filter((l) => Number.isFinite(l.startS) && l.startS <= activityEnd).sort((a, b) => a.startS - b.startS);
  for (let i = 0; i < sorted.length; ) {
    let j = i + 1;
    while (j < sorted.length && sorted[j]!.startS === sorted[i]!.startS) j++;
    const nextStart = j < sorted.length ? sorted[j]!.startS : undefined;
    // Laps that start at the same instant are one lap: the fullest of them (fullerLap), but one
    // that ends by the time the next lap starts before one that runs over the laps after it (a
    // summary of several: a trail watch wrote one of 2,778 m from the run's start beside its
    // 1 km laps, which counted its distance twice in every lap total).
    const fits = (l: DeclaredLap) => nextStart === undefined || (declaredEndOf(l) ?? -Infinity) <= nextStart + 1;
    let lap = sorted[i]!;
    for (let k = i + 1; k < j; k++) {
      const other = sorted[k]!;
      if (fits(other) !== fits(lap) ? fits(other) : fullerLap(lap, other)) lap = other;
    }
    i = j;
    const declaredEnd = declaredEndOf(lap);
    const endS = Math.min(declaredEnd ?? Infinity, nextStart ?? Infinity);
    const from = lowerBound(streams.time_s, lap.startS - t0);
    let to = (Number.isFinite(endS) ? lowerBound(streams.time_s, endS - t0 + 1e-9) : n) - 1;
    if (to >= n) to = n - 1;
    const lapComputed =
      from <= to
        ? summarize(streams, samples.breaks, from, to)
        : { ...nullTotals(), elapsedTimeS: Number.isFinite(endS) ? endS - lap.startS : 0 };
    const stated = withoutUnrecorded(lap.totals, recorded);
    const merged = merge(stated, lapComputed);
    // A lap that starts before the activity is counted from the activity's start: a TCX or GPX
    // activity starts at its first sample, so a TCX lap opened before the GPS had a fix loses the
    // time before it. A FIT activity starts at its session's start_time, so its laps keep the
    // elapsed time the file gives them, even where the first record came some seconds later.
    const early = Math.max(0, startS - lap.startS);
    // A lap lasts until the next one starts at the latest, and not past its activity's end,
    // whatever it declares (a virtual ride's file gave a 27-minute ride laps of 50 and 55 minutes).
    const room = Math.min(nextStart ?? Infinity, startS + totals.elapsedTimeS) - Math.max(lap.startS, startS);
    const lapElapsed = round3(Math.min(Math.max(0, merged.elapsedTimeS - early), Math.max(0, room), LIMITS.elapsedS));
    const lapMoving = merged.movingTimeS === null ? null : Math.min(merged.movingTimeS, lapElapsed);
    // An average the file did not state (or stated as 0, or absurd) was derived over the time it
    // declared: over the time the lap keeps (shortened above), the same distance is covered faster.
    const kept = lapMoving || lapElapsed;
    const shortened = kept < (merged.movingTimeS || merged.elapsedTimeS);
    const averageSpeedMps =
      shortened && check(stated.averageSpeedMps, 0, LIMITS.speedMps, true) === null && merged.distanceM !== null && kept > 0
        ? check(merged.distanceM / kept, 0, LIMITS.speedMps)
        : merged.averageSpeedMps;
    laps.push({
      startOffsetS: Math.max(0, round3(lap.startS - t0)),
      elapsedTimeS: lapElapsed,
      movingTimeS: lapMoving,
      distanceM: merged.distanceM,
      elevationGainM: merged.elevationGainM,
      averageSpeedMps,
      maxSpeedMps: merged.maxSpeedMps,
      averageHeartRateHz: merged.averageHeartRateHz,
      maxHeartRateHz: merged.maxHeartRateHz,
      averagePowerW: merged.averagePowerW,
    });
  }
  if (laps.length === 0) {
    laps.push({
      startOffsetS: 0,
      elapsedTimeS: totals.elapsedTimeS,
      movingTimeS: totals.movingTimeS,
      distanceM: totals.distanceM,
      elevationGainM: totals.elevationGainM,
      averageSpeedMps: totals.averageSpeedMps,
      maxSpeedMps: totals.maxSpeedMps,
      averageHeartRateHz: totals.averageHeartRateHz,
      maxHeartRateHz: totals.maxHeartRateHz,
      averagePowerW: totals.averagePowerW,
    });
  }
  const startTime = new Date(Math.round(startS * 1000));
  return {
    sport: input.sport,
    startTime,
    // From the start as kept (to the millisecond), so the first sample's instant is exactly the start plus this.
    firstSampleOffsetS: round3(t0 - startTime.getTime() / 1000),
    name: cleanName(input.name),
    totals,
    streams,
    laps,
  };
}

function nullTotals(): Omit<Totals, "elapsedTimeS"> {
  return {
    movingTimeS: null,
    distanceM: null,
    elevationGainM: null,
    averageSpeedMps: null,
    maxSpeedMps: null,
    averageHeartRateHz: null,
    maxHeartRateHz: null,
    averagePowerW: null,
    energyJ: null,
  };
}

/** A name fit for the activity's `name` (1 to 200 characters, no control or hidden characters: ActivityName), or null. */
export function cleanName(name: string | null | undefined): string | null {
  if (typeof name !== "string") return null;
  const s = stripHiddenCharacters(name.replace(/[\u0000-\u001f\u007f]+/g, " ")).replace(/\s+/g, " ").trim();
  if (!s) return null;
  // Stripped again after the cut: a joiner the cut left at the end joins nothing. Nothing left
  // (only marks that combined with nothing, say): no name, and the activity gets its default.
  return stripHiddenCharacters(firstCharacters(s, 200)).trim() || null;
}

/** The error for a file that holds no timed sample. */
export function noActivityData(what: string): FileError {
  return new FileError("no_activity_data", what);
}
