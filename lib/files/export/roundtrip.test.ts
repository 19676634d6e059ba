import { SAMPLES_DIR } from "../testing/samples";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PRECISION, roundTo } from "../../db/schema/measure";
import { parseActivityFile } from "../parse";
import { atPrecision } from "../stream-arbitraries";
import { syntheticActivity } from "../synthetic";
import { rideWithLegFasterThanItsMaximum } from "../testing/fit-files";
import { FileError, type FileKind, type Lap, type ParsedActivity, type Streams, type Totals } from "../types";
import { exportFit, exportGpx, exportTcx, type ExportInput } from "./index";

/*
 * CONTRACT §11's promise, with the service's own importer: a generated FIT file gives the same
 * streams and totals; a generated GPX or TCX file gives the same start, elapsed time, distance
 * and the channels its format carries. For every real sample and for synthetic activities:
 * parse(export(parse(file))).
 */

const SAMPLES = SAMPLES_DIR;

function asInput(p: ParsedActivity): ExportInput {
  return {
    sport: p.sport,
    startTime: p.startTime,
    firstSampleOffsetS: p.firstSampleOffsetS,
    name: p.name ?? "Activity",
    totals: p.totals,
    streams: p.streams,
    laps: p.laps,
  };
}

const reparse = {
  fit: (a: ExportInput) => parseActivityFile(exportFit(a), "fit"),
  gpx: (a: ExportInput) => parseActivityFile(exportGpx(a), "gpx"),
  tcx: (a: ExportInput) => parseActivityFile(exportTcx(a), "tcx"),
};

/** Only the channels a format carries (TCX: no temperature). */
function carried(s: Streams, format: FileKind): Streams {
  const out: Streams = { ...s };
  if (format === "tcx") delete out.temperature_c;
  return out;
}

/**
 * Samples a format can hold: every one, at its time to the millisecond (FIT: a record's whole
 * second and, in the service's timestamp_ms, the milliseconds after it).
 */
function holdable(s: Streams): Streams {
  return { ...s, time_s: s.time_s.map((t) => Math.round(t * 1000) / 1000) };
}

/**
 * Values at what every format keeps: temperature in whole °C (GPX and TCX; FIT keeps 0.1 °C in
 * the service's developer field), heart rate and cadence in whole per minute; otherwise as the
 * service stores them (a FIT file keeps altitude to 1 cm in the service's developer field).
 */
function coarse(s: Streams, format: FileKind): Streams {
  const out: Streams = { ...s };
  const map = (key: keyof Streams, f: (v: number) => number) => {
    const v = out[key] as (number | null)[] | undefined;
    if (v) (out as Record<string, unknown>)[key] = v.map((x) => (x == null ? null : f(x)));
  };
  // As FIT stores positions: semicircles (2^31 per 180°), a little finer than 1e-7°.
  const semi = (v: number) => (Math.round((v * 2 ** 31) / 180) * 180) / 2 ** 31;
  if (format === "fit" && out.latlng) out.latlng = out.latlng.map((p) => (p ? [semi(p[0]), semi(p[1])] : null));
  if (format !== "fit") map("temperature_c", (v) => Math.round(v));
  map("heart_rate_hz", (v) => Math.round(v * 60) / 60);
  if (format !== "fit") map("cadence_hz", (v) => Math.round(v * 60) / 60);
  map("power_w", (v) => Math.round(v));
  return atPrecision(out);
}

/** Drops channels that come back entirely empty either way (a format cannot tell "absent" from "all missing"). */
function present(s: Streams): Streams {
  const out: Streams = { size: s.size, time_s: s.time_s };
  for (const key of ["latlng", "distance_m", "altitude_m", "speed_mps", "heart_rate_hz", "cadence_hz", "power_w", "temperature_c"] as const) {
    const v = s[key] as unknown[] | undefined;
    if (v && v.some((x) => x != null)) (out as Record<string, unknown>)[key] = v;
  }
  return out;
}

/**
 * TCX and GPX end with a point of only a time (GPX: and the activity's distance, at a position
 * without a fix) when the activity lasted past its last sample: not a sample of the original.
 */
function withoutEndMarker(s: Streams, size: number): Streams {
  if (s.size !== size + 1) return s;
  const out: Streams = { size, time_s: s.time_s.slice(0, size) };
  for (const key of ["latlng", "distance_m", "altitude_m", "speed_mps", "heart_rate_hz", "cadence_hz", "power_w", "temperature_c"] as const) {
    const v = s[key] as unknown[] | undefined;
    if (v) {
      if (key !== "distance_m") expect(v[size]).toBeNull();
      (out as Record<string, unknown>)[key] = v.slice(0, size);
    }
  }
  return out;
}

function checkRoundTrip(original: ExportInput, format: FileKind) {
  const [back, ...more] = reparse[format](original);
  expect(more).toHaveLength(0);
  const startMs = original.startTime.getTime();
  // FIT's session keeps whole seconds: its records count from the whole second the first sample
  // falls in after the start (the start's own second, as the session's start_time keeps it). GPX
  // and TCX start at their first point, which they put within the start's second (firstPointAtStart).
  const offset = original.firstSampleOffsetS;
  const written = format === "fit" ? offset : offset - Math.floor(offset);
  const firstMs = format === "fit" ? (Math.round(startMs / 1000) + Math.floor(offset)) * 1000 : startMs + Math.round(written * 1000);
  const expected = holdable(original.streams);
  // A FIT file keeps the session's start, in whole seconds; GPX and TCX start with their first point.
  const backFirstMs = firstMs + Math.round(expected.time_s[0]! * 1000);
  const backStartMs = format === "fit" ? Math.round(startMs / 1000) * 1000 : backFirstMs;
  expect(back!.startTime.getTime()).toBe(backStartMs);
  expect(back!.firstSampleOffsetS).toBe((backFirstMs - backStartMs) / 1000);
  const shift = (s: Streams) => ({ ...s, time_s: s.time_s.map((t) => t - s.time_s[0]!) });
  expect(present(coarse(carried(withoutEndMarker(back!.streams, expected.size), format), format))).toEqual(
    present(coarse(carried(shift(expected), format), format)),
  );
  // Elapsed time: every format carries the activity's own (a session's, laps' spans), TCX and
  // GPX with a last point at its end, counted from their first point. The importer keeps whole seconds.
  const elapsedFromStart = Math.max(original.totals.elapsedTimeS, written + original.streams.time_s.at(-1)!);
  const elapsed = format === "fit" ? elapsedFromStart : elapsedFromStart - written;
  expect(Math.abs(back!.totals.elapsedTimeS - elapsed)).toBeLessThanOrEqual(1);
  const t = original.totals;
  const b = back!.totals;
  if (t.distanceM != null) {
    // TCX carries each lap's distance, the last one's making up what a device's laps left
    // short of its session's; GPX carries each point's and the end's.
    expect(Math.abs(b.distanceM! - t.distanceM)).toBeLessThanOrEqual(0.1);
  } else expect(b.distanceM).toBeNull();
  if (format === "fit") {
    // The rest of FIT's totals, at the precision the service stores them (lib/db/schema/measure.ts):
    // heart rate, power and energy (total_calories: total_work is the mechanical work, not the
    // energy) in the service's developer fields beside the native whole bpm, watts and kcal;
    // centimetres of ascent (total_ascent and total_fractional_ascent).
    expect(b.movingTimeS).toBeCloseTo(t.movingTimeS ?? b.movingTimeS!, 0);
    if (t.elevationGainM != null) expect(b.elevationGainM).toBeCloseTo(t.elevationGainM, 2);
    for (const k of ["averageSpeedMps", "maxSpeedMps"] as const) if (t[k] != null) expect(b[k]).toBeCloseTo(t[k], 3);
    const stored = (v: number | null, places: number) => (v === null ? null : roundTo(v, places));
    for (const k of ["averageHeartRateHz", "maxHeartRateHz"] as const) expect(stored(b[k], PRECISION.heartRate)).toBe(stored(t[k], PRECISION.heartRate));
    expect(stored(b.averagePowerW, PRECISION.power)).toBe(stored(t.averagePowerW, PRECISION.power));
    expect(stored(b.energyJ, PRECISION.energy)).toBe(stored(t.energyJ, PRECISION.energy));
    expect(back!.laps.map((l) => l.startOffsetS)).toEqual(
      (original.laps.length ? original.laps : [{ startOffsetS: 0 }]).map((l) => Math.round(l.startOffsetS)),
    );
    // Each lap as long as it was, a first lap that began with the session before the first sample too.
    if (original.laps.length) {
      expect(back!.laps.map((l) => roundTo(l.elapsedTimeS, PRECISION.duration))).toEqual(original.laps.map((l) => roundTo(l.elapsedTimeS, PRECISION.duration)));
    }
  }
}

describe("parse(export(synthetic))", () => {
  for (const format of ["fit", "gpx", "tcx"] as const) {
    for (const sport of ["ride", "run"] as const) {
      it(`${format}, a ${sport}`, () => checkRoundTrip(syntheticActivity({ hours: 1, sport, seed: 31 }), format));
    }
  }
});

/** Each total and lap field at the precision the service stores it (lib/db/schema/measure.ts). */
const PLACES: Record<keyof Totals | keyof Lap, number> = {
  startOffsetS: PRECISION.duration,
  elapsedTimeS: PRECISION.duration,
  movingTimeS: PRECISION.duration,
  distanceM: PRECISION.distance,
  elevationGainM: PRECISION.distance,
  averageSpeedMps: PRECISION.speed,
  maxSpeedMps: PRECISION.speed,
  averageHeartRateHz: PRECISION.heartRate,
  maxHeartRateHz: PRECISION.heartRate,
  averagePowerW: PRECISION.power,
  energyJ: PRECISION.energy,
};
function asStored<T extends Partial<Totals & Lap>>(t: T): T {
  const out = { ...t };
  for (const k of Object.keys(out) as (keyof T & keyof typeof PLACES)[]) {
    const v = out[k];
    if (typeof v === "number") (out as Record<string, number>)[k] = roundTo(v, PLACES[k]);
  }
  return out;
}

describe("FIT: what the native fields round comes back as stored", () => {
  // What two reviewers saw come back rounded: altitude 101.5 as 101.6 (0.2 m steps), temperature
  // 21.3 as 21 (whole °C), an average heart rate of 2.4444 Hz as 2.45 (whole bpm), 203.4 W as
  // 203, 626,569 J as 627,600 (whole kcal), a lap's 2.1287 Hz as 2.1333.
  const base = syntheticActivity({ hours: 1.5, sport: "ride", seed: 12 });
  const altitudes = [101.5, 101.37, -3.21, 0.05, 2_345.67, 101.6];
  const temperatures = [21.3, -4.7, 0.1, -0.1, 35.9, 21];
  const activity: ExportInput = {
    ...base,
    streams: {
      ...base.streams,
      altitude_m: base.streams.altitude_m!.map((_, i) => altitudes[i % altitudes.length]!),
      temperature_c: base.streams.temperature_c!.map((_, i) => (i % 97 === 50 ? null : temperatures[i % temperatures.length]!)),
    },
    totals: { ...base.totals, averageHeartRateHz: 2.4444, maxHeartRateHz: 3.0167, averagePowerW: 203.4, energyJ: 626_569 },
    laps: base.laps.map((l, i) => ({ ...l, averageHeartRateHz: [2.1287, 2.3001, 2.4999][i % 3]!, maxHeartRateHz: [2.9833, 3.0167, 2.7777][i % 3]!, averagePowerW: [187.6, 203.4, 0.1][i % 3]! })),
  };

  it("the streams at their stored precision (altitude to 1 cm, temperature to 0.1 °C), the totals and every lap's", () => {
    expect(activity.laps.length).toBeGreaterThan(1);
    const [back, ...more] = reparse.fit(activity);
    expect(more).toHaveLength(0);
    expect(back!.startTime).toEqual(activity.startTime);
    expect(atPrecision(back!.streams)).toEqual(atPrecision(activity.streams));
    expect(back!.streams.altitude_m!.slice(0, 6)).toEqual(altitudes);
    expect(back!.streams.temperature_c!.slice(0, 6)).toEqual(temperatures);
    expect(asStored(back!.totals)).toEqual(asStored(activity.totals));
    expect(asStored(back!.totals)).toMatchObject({ averageHeartRateHz: 2.4444, maxHeartRateHz: 3.0167, averagePowerW: 203.4, energyJ: 626_569 });
    expect(back!.laps.map(asStored)).toEqual(activity.laps.map(asStored));
  });
});

describe("FIT: an average speed derived above the maximum comes back with the maximum", () => {
  // The second leg of a multisport file states no speeds: its average is its 4,800 m over 600 s,
  // 8 m/s, and its maximum the records' 7.5 m/s (a wheel sensor beside a GPS distance); its laps
  // likewise. A FIT file that stated that 8 m/s as its average beside the 7.5 m/s maximum read
  // back as a file contradicting itself, and lost the maximum.
  const [, leg] = parseActivityFile(rideWithLegFasterThanItsMaximum(), "fit");

  it("the totals and every lap's as stored, the average above the maximum included", () => {
    expect([leg!.totals.averageSpeedMps, leg!.totals.maxSpeedMps]).toEqual([8, 7.5]);
    expect(leg!.laps.map((l) => [l.averageSpeedMps, l.maxSpeedMps])).toEqual([[8, 7.5], [8, 7.5]]);
    const [back, ...more] = reparse.fit(asInput(leg!));
    expect(more).toHaveLength(0);
    expect(asStored(back!.totals)).toEqual(asStored(leg!.totals));
    expect(back!.laps.map(asStored)).toEqual(leg!.laps.map(asStored));
    expect(atPrecision(back!.streams)).toEqual(atPrecision(leg!.streams));
  });

  it("an average derived again above the maximum after a change of distance (an activity whose distance was corrected upwards)", () => {
    const totals = { ...leg!.totals, distanceM: 6000, averageSpeedMps: 6000 / 600 };
    const [back] = reparse.fit({ ...asInput(leg!), totals });
    expect(asStored(back!.totals)).toEqual(asStored(totals));
    expect(back!.totals.maxSpeedMps).toBe(7.5);
  });
});

// The samples are in the repository: a missing folder (a mistyped SAMPLES_DIR) fails here, and
// an empty one below, rather than skipping every round trip.
const sampleFiles = (["fit", "gpx", "tcx"] as const).flatMap((kind) => readdirSync(path.join(SAMPLES, kind)).map((f) => ({ kind, file: f })));

describe("parse(export(parse(sample)))", () => {
  for (const kind of ["fit", "gpx", "tcx"] as const) {
    it(`finds the ${kind} samples in ${SAMPLES}`, () => expect(sampleFiles.filter((f) => f.kind === kind).length).toBeGreaterThan(0));
  }
  for (const { kind, file } of sampleFiles) {
    let parsed: ParsedActivity[] | null = null;
    try {
      parsed = parseActivityFile(readFileSync(path.join(SAMPLES, kind, file)), kind);
    } catch (e) {
      if (!(e instanceof FileError)) throw e;
    }
    if (!parsed) continue; // a file that is not an activity (the importer's tests cover those)
    parsed.forEach((activity, n) => {
      for (const format of ["fit", "gpx", "tcx"] as const) {
        it.skipIf(format === "gpx" && !activity.streams.latlng)(`${kind}/${file}${parsed!.length > 1 ? ` #${n}` : ""} → ${format}`, () =>
          checkRoundTrip(asInput(activity), format),
        );
      }
    });
  }
});
