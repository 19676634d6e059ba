import { Decoder, Stream } from "@garmin/fitsdk";
import { describe, expect, it } from "vitest";
import { Activity, CreateActivityInput } from "../activities/schemas";
import { inspectUpload } from "./detect";
import { parseActivityFile } from "./parse";
import { sample, sampleFiles } from "./testing/samples";
import { FileError, STREAM_KEYS, type ParsedActivity } from "./types";

// Every shared sample goes through inspectUpload and parseActivityFile, and what comes out is
// checked against an independent reading of the same file: fitsdk's own session messages for
// FIT, the raw text for GPX and TCX.

function parse(folder: string, name: string): ParsedActivity[] {
  const inspected = inspectUpload(sample(folder, name));
  if (!inspected.ok) throw new Error(`${name}: ${inspected.detail}`);
  return parseActivityFile(inspected.content, inspected.kind);
}

function parseError(folder: string, name: string): FileError {
  try {
    parse(folder, name);
  } catch (e) {
    if (e instanceof FileError) return e;
    throw e;
  }
  throw new Error(`${name} parsed`);
}

/** The shape every activity must have, whatever the file: the contract's invariants. */
function expectWellFormed(a: ParsedActivity) {
  const { streams } = a;
  expect(streams.size).toBeGreaterThan(0);
  expect(streams.time_s[0]).toBe(0);
  for (let i = 1; i < streams.size; i++) expect(streams.time_s[i]!).toBeGreaterThan(streams.time_s[i - 1]!);
  for (const key of Object.keys(streams)) {
    if (key === "size") continue;
    expect(STREAM_KEYS).toContain(key);
    const values = streams[key as keyof typeof streams] as unknown[];
    expect(values).toHaveLength(streams.size);
    expect(values.some((v) => v !== null), `${key} is present but never recorded`).toBe(true);
  }
  for (const p of streams.latlng ?? []) {
    if (p === null) continue;
    expect(Math.abs(p[0])).toBeLessThanOrEqual(90);
    expect(Math.abs(p[1])).toBeLessThanOrEqual(180);
  }
  // The totals fit the columns the manual-activity schema validates.
  const t = a.totals;
  const input = {
    name: "x",
    sport_type: a.sport,
    start_local: "2024-01-01T00:00:00",
    elapsed_time_s: t.elapsedTimeS,
    moving_time_s: t.movingTimeS,
    distance_m: t.distanceM,
    elevation_gain_m: t.elevationGainM,
    average_speed_mps: t.averageSpeedMps,
    max_speed_mps: t.maxSpeedMps,
    average_heart_rate_hz: t.averageHeartRateHz,
    max_heart_rate_hz: t.maxHeartRateHz,
    average_power_w: t.averagePowerW,
    energy_j: t.energyJ,
  };
  const checked = CreateActivityInput.safeParse(input);
  expect(checked.success, JSON.stringify(checked.error?.issues)).toBe(true);
  expect(Activity.shape.sport_type.safeParse(a.sport).success).toBe(true);
  if (t.movingTimeS !== null) expect(t.movingTimeS).toBeLessThanOrEqual(t.elapsedTimeS);
  expect(a.laps.length).toBeGreaterThan(0);
  for (const lap of a.laps) {
    expect(lap.startOffsetS).toBeGreaterThanOrEqual(0);
    expect(lap.elapsedTimeS).toBeGreaterThanOrEqual(0);
    if (lap.movingTimeS !== null) expect(lap.movingTimeS).toBeLessThanOrEqual(lap.elapsedTimeS + 1e-9);
  }
  // Channels never recorded have null totals, not 0.
  if (!streams.heart_rate_hz) expect(t.averageHeartRateHz).toBeNull();
  if (!streams.power_w) expect(t.averagePowerW).toBeNull();
  if (!streams.altitude_m) expect(t.elevationGainM).toBeNull();
}

type Mesg = Record<string, unknown>;
/** fitsdk's own reading, with its default options. */
function fitsdkMessages(bytes: Uint8Array) {
  const { messages, errors } = new Decoder(Stream.fromByteArray(bytes)).read();
  return { messages: messages as unknown as Record<string, Mesg[]>, errors };
}

const FIT_SPORT = { running: "run", cycling: "ride", walking: "walk" } as Record<string, string>;

describe("FIT samples", () => {
  // The Strava Android file is a crashed recording: 17 bytes shorter than its header declares,
  // and its records lose their framing at byte 7,471. It is a damaged file (below).
  const readable = sampleFiles("fit").filter((f) => !f.startsWith("strava-android-app"));

  it.each(readable)("%s gives one activity per session, with the session's own totals", (name) => {
    const bytes = sample("fit", name);
    const activities = parse("fit", name);
    const { messages, errors } = fitsdkMessages(bytes);
    const sessions = messages.sessionMesgs ?? [];
    expect(activities).toHaveLength(Math.max(1, sessions.length));
    for (const [i, a] of activities.entries()) {
      expectWellFormed(a);
      const s = sessions[i]!;
      expect(a.startTime.getTime()).toBe((s.startTime as Date).getTime());
      expect(a.totals.elapsedTimeS).toBe(Math.round(s.totalElapsedTime as number));
      expect(a.totals.movingTimeS).toBe(Math.round(s.totalTimerTime as number));
      const distance = s.totalDistance as number | undefined;
      if (distance) expect(a.totals.distanceM).toBeCloseTo(distance, 2);
      if (s.totalCalories) expect(a.totals.energyJ).toBe((s.totalCalories as number) * 4184);
      if (s.avgHeartRate) expect(a.totals.averageHeartRateHz).toBeCloseTo((s.avgHeartRate as number) / 60, 6);
      expect(a.sport).toBe(FIT_SPORT[s.sport as string] ?? (s.sport === "cycling" ? "ride" : "other"));
      // The samples are the records timed within the session, one per distinct timestamp.
      if (errors.length === 0) {
        const from = (s.startTime as Date).getTime();
        const to = from + (s.totalElapsedTime as number) * 1000;
        const times = new Set(
          (messages.recordMesgs ?? []).map((r) => (r.timestamp as Date).getTime()).filter((t) => t >= from && t <= to),
        );
        expect(a.streams.size).toBe(times.size);
      }
      // Laps: the file's lap messages within the session.
      const laps = (messages.lapMesgs ?? []).filter((l) => {
        const t = (l.startTime as Date).getTime();
        return t >= (s.startTime as Date).getTime() && t <= (s.startTime as Date).getTime() + (s.totalElapsedTime as number) * 1000;
      });
      expect(a.laps).toHaveLength(Math.max(1, laps.length));
    }
  });

  it("reads positions in degrees and channels in SI units (garmin-edge-500-activity.fit)", () => {
    const [a] = parse("fit", "garmin-edge-500-activity.fit");
    const { messages } = fitsdkMessages(sample("fit", "garmin-edge-500-activity.fit"));
    const first = messages.recordMesgs!.find((r) => r.positionLat !== undefined)!;
    const i = a!.streams.time_s.findIndex((_, k) => a!.streams.latlng![k] !== null);
    expect(a!.streams.latlng![i]![0]).toBeCloseTo(((first.positionLat as number) * 180) / 2 ** 31, 9);
    expect(a!.streams.latlng![i]![1]).toBeCloseTo(((first.positionLong as number) * 180) / 2 ** 31, 9);
    const withHr = messages.recordMesgs!.find((r) => r.heartRate !== undefined)!;
    const j = a!.streams.heart_rate_hz!.findIndex((v) => v !== null);
    expect(a!.streams.heart_rate_hz![j]).toBeCloseTo((withHr.heartRate as number) / 60, 9);
    expect(a!.streams.temperature_c).toBeDefined();
    expect(a!.streams.cadence_hz!.find((v) => v !== null)).toBeLessThan(5);
  });

  it("pauses: moving time is the timer time, shorter than elapsed (2015-10-13-08-43-15.fit)", () => {
    const [a] = parse("fit", "2015-10-13-08-43-15.fit");
    expect(a!.totals.movingTimeS).toBeLessThan(a!.totals.elapsedTimeS);
  });

  it("an indoor ride without distance has null distance and speed, not the session's 0", () => {
    const [a] = parse("fit", "sample-activity-indoor-trainer.fit");
    const { messages } = fitsdkMessages(sample("fit", "sample-activity-indoor-trainer.fit"));
    expect(messages.sessionMesgs![0]!.totalDistance).toBe(0);
    expect(a!.streams.distance_m).toBeUndefined();
    expect(a!.streams.latlng).toBeUndefined();
    expect(a!.totals.distanceM).toBeNull();
    expect(a!.totals.averageSpeedMps).toBeNull();
    expect(a!.totals.averagePowerW).toBe(messages.sessionMesgs![0]!.avgPower);
  });

  it("reads compressed-timestamp records, which fitsdk alone cannot (compressed-speed-distance.fit)", () => {
    const bytes = sample("fit", "compressed-speed-distance.fit");
    const { errors, messages } = fitsdkMessages(bytes);
    expect(String(errors[0])).toMatch(/compressed timestamp/);
    const [a] = parse("fit", "compressed-speed-distance.fit");
    expectWellFormed(a!);
    const session = messages.sessionMesgs![0]!;
    // The records' speed and distance come from the compressed_speed_distance components; the
    // last one lands on the session's total.
    const d = a!.streams.distance_m!.filter((v) => v !== null);
    expect(d.at(-1)!).toBeGreaterThan((session.totalDistance as number) * 0.98);
    expect(d.at(-1)!).toBeLessThanOrEqual((session.totalDistance as number) * 1.02);
    // The records' times, rebuilt from 5-bit offsets, span the session as its own totals say.
    const t = a!.streams.time_s;
    expect(t.at(-1)!).toBeLessThanOrEqual(session.totalElapsedTime as number);
    expect(t.at(-1)!).toBeGreaterThan((session.totalTimerTime as number) * 0.95);
    expect(a!.streams.speed_mps!.some((v) => v !== null && v > 1)).toBe(true);
  });

  it("the crashed Strava recording is a damaged file, with a reason", () => {
    const e = parseError("fit", "strava-android-app-201.10-b1218918.fit");
    expect(e.code).toBe("invalid_file");
    expect(e.message).toMatch(/ends after 78,219 of its 78,236 data bytes/);
  });
});

describe("files that hold no activity", () => {
  it.each(sampleFiles("other"))("other/%s is no_activity_data", (name) => {
    const e = parseError("other", name);
    expect(e.code).toBe("no_activity_data");
    expect(e.message.length).toBeGreaterThan(20);
  });

  it("gpx/empty_trk.gpx is no_activity_data", () => {
    expect(parseError("gpx", "empty_trk.gpx").code).toBe("no_activity_data");
  });
});

const text = (folder: string, name: string) => new TextDecoder().decode(sample(folder, name));

describe("GPX samples", () => {
  const files = sampleFiles("gpx").filter((f) => f !== "empty_trk.gpx");

  it.each(files)("%s: one activity per track, a sample per timed <trkpt>", (name) => {
    const activities = parse("gpx", name);
    const src = text("gpx", name);
    const tracks = src.split(/<trk[\s>]/).slice(1);
    const timedPerTrack = tracks.map((trk) => {
      const times = [...trk.matchAll(/<trkpt[\s\S]*?<\/trkpt>/g)].map((m) => /<time>([^<]+)<\/time>/.exec(m[0])?.[1]).filter(Boolean);
      return new Set(times.map((t) => Date.parse(t!))).size;
    });
    expect(activities.map((a) => a.streams.size)).toEqual(timedPerTrack.filter((n) => n > 0));
    for (const a of activities) {
      expectWellFormed(a);
      expect(a.streams.latlng).toBeDefined();
      expect(a.streams.distance_m).toBeDefined();
      expect(a.laps).toHaveLength(1);
      expect(a.laps[0]!.elapsedTimeS).toBe(a.totals.elapsedTimeS);
    }
  });

  it("reads name, sport, heart rate and cadence from Strava's GPX (Friday-Evening-Run.gpx)", () => {
    const [a] = parse("gpx", "Friday-Evening-Run.gpx");
    const src = text("gpx", "Friday-Evening-Run.gpx");
    expect(a!.name).toBe(/<trk>\s*<name>([^<]+)<\/name>/.exec(src)![1]);
    expect(a!.sport).toBe("run");
    const points = src.split("<trkpt").slice(1);
    const firstWithHr = points.findIndex((p) => p.includes("<gpxtpx:hr>"));
    const firstHr = Number(/<gpxtpx:hr>(\d+)</.exec(points[firstWithHr]!)![1]);
    expect(a!.streams.heart_rate_hz![firstWithHr]).toBeCloseTo(firstHr / 60, 9);
    expect(a!.streams.heart_rate_hz!.slice(0, firstWithHr).every((v) => v === null)).toBe(true);
    expect(a!.streams.cadence_hz![0]).toBeCloseTo(Number(/<gpxtpx:cad>(\d+)</.exec(points[0]!)![1]) / 60, 9);
    // Strava writes power in a second <extensions> element of the same point.
    expect(a!.streams.power_w).toBeDefined();
    expect(a!.startTime.toISOString()).toBe(new Date(/<trkpt[\s\S]*?<time>([^<]+)</.exec(src)![1]!).toISOString());
  });

  it("a track with a gap in heart rate keeps nulls there (missing_hr.gpx)", () => {
    const [a] = parse("gpx", "missing_hr.gpx");
    const hr = a!.streams.heart_rate_hz!;
    expect(hr.some((v) => v === null)).toBe(true);
    expect(hr.some((v) => v !== null)).toBe(true);
  });

  it("distance is the haversine length of the track (run.gpx)", () => {
    const [a] = parse("gpx", "run.gpx");
    const src = text("gpx", "run.gpx");
    const pts = [...src.matchAll(/lon="([-\d.]+)" lat="([-\d.]+)"/g)].map((m) => [Number(m[2]), Number(m[1])] as const);
    let total = 0;
    const R = 6_371_008.8;
    const rad = Math.PI / 180;
    for (let i = 1; i < pts.length; i++) {
      const [a1, b1] = pts[i - 1]!;
      const [a2, b2] = pts[i]!;
      const h = Math.sin(((a2 - a1) * rad) / 2) ** 2 + Math.cos(a1 * rad) * Math.cos(a2 * rad) * Math.sin(((b2 - b1) * rad) / 2) ** 2;
      total += 2 * R * Math.asin(Math.sqrt(h));
    }
    expect(a!.totals.distanceM!).toBeCloseTo(total, 0);
  });
});

describe("TCX samples", () => {
  const files = sampleFiles("tcx");

  it.each(files)("%s: one activity per <Activity>, a sample per distinct trackpoint time", (name) => {
    const activities = parse("tcx", name);
    const src = text("tcx", name);
    expect(activities).toHaveLength((src.match(/<Activity[\s>]/g) ?? []).length);
    const times = new Set([...src.matchAll(/<Trackpoint>\s*<Time>([^<]+)<\/Time>/g)].map((m) => Date.parse(m[1]!)));
    expect(activities.reduce((n, a) => n + a.streams.size, 0)).toBe(times.size);
    for (const a of activities) expectWellFormed(a);
    const sport = /<Activity Sport="(\w+)"/.exec(src)![1];
    expect(activities[0]!.sport).toBe(sport === "Running" ? "run" : sport === "Biking" ? "ride" : "other");
  });

  it("takes the laps' totals (sample.tcx)", () => {
    const [a] = parse("tcx", "sample.tcx");
    const src = text("tcx", "sample.tcx");
    expect(a!.totals.movingTimeS).toBe(Math.round(Number(/<TotalTimeSeconds>([^<]+)</.exec(src)![1])));
    expect(a!.totals.distanceM).toBeCloseTo(Number(/<Lap[\s\S]*?<DistanceMeters>([^<]+)</.exec(src)![1]), 6);
    expect(a!.totals.maxSpeedMps).toBeCloseTo(Number(/<MaximumSpeed>([^<]+)</.exec(src)![1]), 6);
    expect(a!.totals.energyJ).toBe(Number(/<Calories>([^<]+)</.exec(src)![1]) * 4184);
    expect(a!.streams.speed_mps).toBeDefined();
    expect(a!.streams.power_w).toBeDefined();
  });

  it("bad.tcx (Fitbit: a repeated lap, positions 0 and \"undefined\") is the ride its lap describes", () => {
    const [a] = parse("tcx", "bad.tcx");
    expect(a!.sport).toBe("ride");
    // The repeated lap counts once.
    expect(a!.laps).toHaveLength(1);
    expect(a!.totals.distanceM).toBeCloseTo(6839.97, 2);
    expect(a!.totals.energyJ).toBe(221 * 4184);
    // (0, 0) and non-numbers are no position; (0, 10) lies on the equator exactly: no fix either.
    expect(a!.streams.latlng).toBeUndefined();
    expect(a!.streams.heart_rate_hz).toEqual([121 / 60, 122 / 60]);
  });

  it.each(["tour_hr.tcx", "bad.tcx"])("%s: the distance stream counts from the first trackpoint, whose device distance is 2,604.45 m", (name) => {
    const [a] = parse("tcx", name);
    const src = text("tcx", name);
    const device = [...src.matchAll(/<Trackpoint>[\s\S]*?<DistanceMeters>([^<]+)</g)].map((m) => Number(m[1]));
    expect(device[0]).toBeCloseTo(2604.45, 6);
    const d = a!.streams.distance_m!;
    expect(d[0]).toBe(0);
    expect(d.at(-1)).toBeCloseTo(device.at(-1)! - device[0]!, 6);
    // The laps' total, which counts from the lap's start 16 minutes before the first trackpoint, stays.
    expect(a!.totals.distanceM).toBeCloseTo(6839.97, 2);
  });
});
