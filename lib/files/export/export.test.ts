import { decodeFitStrictly } from "../testing/decode-fit";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { atPrecision } from "../stream-arbitraries";
import { haversineM, syntheticActivity } from "../synthetic";
import { parseActivityFile } from "../parse";
import type { Lap, Streams, Totals } from "../types";

/** The generated documents as text. */
const gpxText = (a: ExportInput) => new TextDecoder().decode(exportGpx(a));
const tcxText = (a: ExportInput) => new TextDecoder().decode(exportTcx(a));
import { exportActivity, exportFit, exportGpx, exportTcx, type ExportInput } from "./index";

/*
 * Each export read back with a reader of its own format (fitsdk's Decoder, a plain XML parser),
 * not with this service's importers, so a shared misunderstanding cannot hide. The synthetic
 * activity's values are at the precision every format keeps, so what comes back must be equal.
 */

const SEMI = 2 ** 31 / 180;

const decodeFit = decodeFitStrictly;

/** Streams from FIT records, as the activity's streams: seconds from the start, Hz, degrees. */
function fitStreams(records: NonNullable<ReturnType<typeof decodeFit>["recordMesgs"]>, start: Date, like: Streams): Streams {
  const t0 = start.getTime();
  const s: Streams = { size: records.length, time_s: records.map((r) => ((r.timestamp as Date).getTime() - t0) / 1000) };
  const col = <T,>(f: (r: (typeof records)[number]) => T | undefined) => records.map((r) => f(r) ?? null);
  if (like.latlng) s.latlng = col((r) => (r.positionLat == null ? undefined : ([r.positionLat / SEMI, r.positionLong! / SEMI] as [number, number])));
  if (like.distance_m) s.distance_m = col((r) => r.distance);
  if (like.altitude_m) s.altitude_m = col((r) => (r as { enhancedAltitude?: number }).enhancedAltitude);
  if (like.speed_mps) s.speed_mps = col((r) => (r as { enhancedSpeed?: number }).enhancedSpeed);
  if (like.heart_rate_hz) s.heart_rate_hz = col((r) => (r.heartRate == null ? undefined : r.heartRate / 60));
  if (like.cadence_hz) s.cadence_hz = col((r) => (r.cadence == null ? undefined : (r.cadence + ((r as { fractionalCadence?: number }).fractionalCadence ?? 0)) / 60));
  if (like.power_w) s.power_w = col((r) => r.power);
  if (like.temperature_c) s.temperature_c = col((r) => r.temperature);
  return s;
}

type FitTotals = {
  totalElapsedTime?: number;
  totalTimerTime?: number;
  totalDistance?: number;
  totalAscent?: number;
  totalFractionalAscent?: number;
  enhancedAvgSpeed?: number;
  enhancedMaxSpeed?: number;
  avgHeartRate?: number;
  maxHeartRate?: number;
  avgPower?: number;
};
function fitTotals(m: FitTotals) {
  return {
    elapsedTimeS: m.totalElapsedTime,
    movingTimeS: m.totalTimerTime,
    distanceM: m.totalDistance,
    elevationGainM: m.totalAscent == null ? null : Math.round((m.totalAscent + (m.totalFractionalAscent ?? 0)) * 100) / 100,
    averageSpeedMps: m.enhancedAvgSpeed,
    maxSpeedMps: m.enhancedMaxSpeed,
    averageHeartRateHz: m.avgHeartRate == null ? null : m.avgHeartRate / 60,
    maxHeartRateHz: m.maxHeartRate == null ? null : m.maxHeartRate / 60,
    averagePowerW: m.avgPower,
  };
}
const lapTotals = (l: Lap | Totals) => ({
  elapsedTimeS: l.elapsedTimeS,
  movingTimeS: l.movingTimeS,
  distanceM: l.distanceM,
  elevationGainM: l.elevationGainM,
  averageSpeedMps: l.averageSpeedMps,
  maxSpeedMps: l.maxSpeedMps,
  averageHeartRateHz: l.averageHeartRateHz,
  maxHeartRateHz: l.maxHeartRateHz,
  averagePowerW: l.averagePowerW,
});

describe("FIT export", () => {
  for (const [label, a] of [
    ["a 1-hour ride", syntheticActivity({ hours: 1, seed: 1 })],
    ["a 40-minute run", syntheticActivity({ hours: 0.7, sport: "run", seed: 2 })],
  ] as const) {
    it(`gives back the same streams, totals and laps: ${label}`, () => {
      const m = decodeFit(exportFit(a));
      expect(m.fileIdMesgs![0]!.type).toBe("activity");
      const session = m.sessionMesgs![0]!;
      expect(session.sport).toBe(a.sport === "ride" ? "cycling" : "running");
      expect((session.startTime as Date).toISOString()).toBe(a.startTime.toISOString());
      expect(atPrecision(fitStreams(m.recordMesgs!, a.startTime, a.streams))).toEqual(atPrecision(a.streams));
      expect(fitTotals(session as FitTotals)).toEqual(lapTotals(a.totals));
      // total_work is the mechanical work, the power samples' (energy_j is the metabolic energy it took).
      let work = 0;
      for (let i = 1; i < a.streams.size; i++) {
        const dt = a.streams.time_s[i]! - a.streams.time_s[i - 1]!;
        // Not across the pause (a gap of minutes): nobody pedalled through it.
        if (dt <= 60) work += a.streams.power_w![i]! * dt;
      }
      expect((session as { totalWork?: number }).totalWork).toBe(Math.round(work));
      expect(m.lapMesgs!.map((l) => fitTotals(l as FitTotals))).toEqual(a.laps.map(lapTotals));
      expect(m.lapMesgs!.map((l) => ((l.startTime as Date).getTime() - a.startTime.getTime()) / 1000)).toEqual(a.laps.map((l) => l.startOffsetS));
      // The pause is a timer stop and start, so other tools count it out of the moving time.
      const timer = m.eventMesgs!.filter((e) => e.event === "timer").map((e) => e.eventType);
      expect(timer).toEqual(["start", "stop", "start", "stopAll"]);
      expect(m.activityMesgs![0]!.numSessions).toBe(1);
    });
  }

  it("writes nothing for a channel the activity lacks, and a record for each sample of a 2 Hz recording, two in a second", () => {
    const a = syntheticActivity({ hours: 0.1, hz: 2, seed: 4 });
    const indoor: ExportInput = { ...a, sport: "virtual_ride", streams: { ...a.streams, latlng: undefined }, laps: [] };
    delete indoor.streams.latlng;
    const bytes = exportFit(indoor);
    const m = decodeFit(bytes);
    expect(m.sessionMesgs![0]!.subSport).toBe("virtualActivity");
    expect(m.recordMesgs!.some((r) => r.positionLat != null)).toBe(false);
    // Each record's whole second, and in the service's timestamp_ms (developer field 9) the milliseconds after it.
    const t0 = a.startTime.getTime();
    expect(m.recordMesgs!.map((r) => ((r.timestamp as Date).getTime() - t0) / 1000)).toEqual(a.streams.time_s.map(Math.floor));
    expect(m.recordMesgs!.map((r) => (r.developerFields as Record<number, number>)[9])).toEqual(a.streams.time_s.map((t) => Math.round((t % 1) * 1000)));
    expect(parseActivityFile(bytes, "fit")[0]!.streams.time_s).toEqual(a.streams.time_s);
    // Without laps, one lap covering the activity.
    expect(m.lapMesgs).toHaveLength(1);
    expect(m.lapMesgs![0]!.totalElapsedTime).toBe(a.totals.elapsedTimeS);
  });

  it("times a sample within a second exactly: its record's timestamp the whole second, timestamp_ms the milliseconds after it", () => {
    // As a GPX or TCX upload has them: tour_hr.tcx's 36.000, 36.571 and 37.000 (three in two
    // seconds), Friday-Evening-Run.gpx's 5.503, and a pause (a timer stop and start) after 7.25.
    const base = syntheticActivity({ hours: 0.1, seed: 7 });
    const time_s = [0, 0.571, 1, 5.503, 7.25, 60.999, 61.5, 62];
    const pick = <T,>(v: T[] | undefined) => v && time_s.map((_, i) => v[i]!);
    const streams: Streams = { size: time_s.length, time_s };
    for (const key of ["latlng", "distance_m", "altitude_m", "speed_mps", "heart_rate_hz", "cadence_hz", "power_w", "temperature_c"] as const) {
      const v = pick(base.streams[key] as unknown[] | undefined);
      if (v) (streams as Record<string, unknown>)[key] = v;
    }
    const a: ExportInput = { ...base, firstSampleOffsetS: 2.7, streams, totals: { ...base.totals, elapsedTimeS: 64.7, movingTimeS: 11.25 }, laps: [] };
    const bytes = exportFit(a);
    const m = decodeFit(bytes);
    // What another tool reads: the whole seconds, counted from the start's second plus the first
    // sample's whole seconds after it (firstSampleOffsetS 2.7: records from 2 s on).
    const t0 = a.startTime.getTime() + 2000;
    expect(m.recordMesgs!.map((r) => ((r.timestamp as Date).getTime() - t0) / 1000)).toEqual([0, 0, 1, 5, 7, 60, 61, 62]);
    expect(m.recordMesgs!.map((r) => (r.developerFields as Record<number, number>)[9])).toEqual([0, 571, 0, 503, 250, 999, 500, 0]);
    const described = m.fieldDescriptionMesgs!.find((d) => d.fieldDefinitionNumber === 9)!;
    expect(described).toMatchObject({ fieldName: "timestamp_ms", units: "ms", fitBaseTypeId: 0x84, scale: 1 });
    // It replaces no native field, so its description names none.
    expect(described.nativeMesgNum).toBeUndefined();
    expect(described.nativeFieldNum).toBeUndefined();
    // The pause's stop no earlier than the record before it (7.25 s), its start at the record after it.
    const timer = m.eventMesgs!.filter((e) => e.event === "timer").map((e) => [e.eventType, ((e.timestamp as Date).getTime() - t0) / 1000]);
    expect(timer.slice(1, 3)).toEqual([["stop", 8], ["start", 60]]);
    // The service reads every sample back at its time.
    const [back] = parseActivityFile(bytes, "fit");
    expect(back!.streams.time_s).toEqual(time_s);
    expect(back!.streams.heart_rate_hz).toEqual(streams.heart_rate_hz);
    expect(back!.firstSampleOffsetS).toBe(2);
    expect(back!.streams.size).toBe(time_s.length);
  });

  it("writes every record of a 4-hour ride", () => {
    const a = syntheticActivity({ hours: 4, seed: 8 });
    const t0 = performance.now();
    const bytes = exportFit(a);
    const ms = performance.now() - t0;
    console.info(`exportFit: 4-hour ride, ${a.streams.size} records, ${(bytes.length / 1e6).toFixed(2)} MB in ${ms.toFixed(0)} ms`);
    expect(decodeFit(bytes).recordMesgs).toHaveLength(a.streams.size);
  });

  it("writes a 30-hour one-lap recording at 1 Hz in every format (more points than a call takes as arguments)", () => {
    // No laps of its own: the export writes one lap holding every point.
    const a = { ...syntheticActivity({ hours: 30, seed: 9 }), laps: [] };
    expect(a.streams.size).toBeGreaterThan(100_000);
    const tcx = tcxText(a);
    expect(tcx.split("<Trackpoint>").length - 1).toBeGreaterThanOrEqual(a.streams.size);
    expect(gpxText(a).split("<trkpt ").length - 1).toBeGreaterThanOrEqual(a.streams.size);
    expect(decodeFit(exportFit(a)).recordMesgs).toHaveLength(a.streams.size);
  });
});

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", removeNSPrefix: true, parseTagValue: false, isArray: (n) => ["trkpt", "Lap", "Trackpoint"].includes(n) });
type Node = Record<string, unknown> & { "#text"?: string };
const n = (v: unknown) => (v == null ? null : Number(typeof v === "object" ? (v as Node)["#text"] : v));

describe("GPX export", () => {
  const a = syntheticActivity({ hours: 1, seed: 6 });

  it("is well-formed GPX 1.1 with the name escaped", () => {
    const text = gpxText({ ...a, name: `Tom & Jerry's <"ride"> \u0001 ✓` });
    expect(XMLValidator.validate(text)).toBe(true);
    const doc = xml.parse(text).gpx;
    expect(doc["@version"]).toBe("1.1");
    expect(doc.trk.name).toBe(`Tom & Jerry's <"ride">  ✓`);
    expect(doc.trk.type).toBe("cycling");
  });

  it("gives back the start, elapsed time, distance and every channel GPX carries", () => {
    const pts = xml.parse(gpxText(a)).gpx.trk.trkseg.trkpt as Node[];
    expect(pts).toHaveLength(a.streams.size);
    const t = pts.map((pt) => Date.parse(pt.time as string));
    expect(new Date(t[0]!)).toEqual(a.startTime);
    expect((t.at(-1)! - t[0]!) / 1000).toBe(a.totals.elapsedTimeS);
    const latlng = pts.map((pt) => [Number(pt["@lat"]), Number(pt["@lon"])] as [number, number]);
    let distance = 0;
    for (let i = 1; i < latlng.length; i++) distance += haversineM(latlng[i - 1]!, latlng[i]!);
    expect(distance).toBeCloseTo(a.totals.distanceM!, 1);
    const ext = (pt: Node) => ((pt.extensions as Node | undefined)?.TrackPointExtension ?? {}) as Node;
    const back: Streams = {
      size: pts.length,
      time_s: t.map((v) => (v - t[0]!) / 1000),
      latlng,
      altitude_m: pts.map((pt) => n(pt.ele)),
      heart_rate_hz: pts.map((pt) => (ext(pt).hr == null ? null : n(ext(pt).hr)! / 60)),
      cadence_hz: pts.map((pt) => n(ext(pt).cad)! / 60),
      power_w: pts.map((pt) => n((pt.extensions as Node).PowerInWatts)),
      temperature_c: pts.map((pt) => n(ext(pt).atemp)),
      distance_m: pts.map((pt) => n((pt.extensions as Node).distance)),
      speed_mps: pts.map((pt) => n((pt.extensions as Node).speed)),
    };
    expect(atPrecision(back)).toEqual(atPrecision(a.streams));
    expect(pts.some((pt) => "fix" in pt)).toBe(false);
  });

  it("adds no end point for a stored distance its rounding to 0.1 m put past the samples' (the elapsed time read back stays)", () => {
    const d = a.streams.distance_m!;
    const sampled = d[a.streams.size - 1]! - d[0]!;
    const points = (distanceM: number) => (xml.parse(gpxText({ ...a, totals: { ...a.totals, distanceM } })).gpx.trk.trkseg.trkpt as Node[]).length;
    expect(points(sampled + 0.04)).toBe(a.streams.size);
    expect(points(sampled + 0.05)).toBe(a.streams.size);
    expect(points(sampled + 0.2)).toBe(a.streams.size + 1);
  });

  it("ends a distance that reaches past the last sample a millisecond after it: read back, the same elapsed time and distance", () => {
    const d = a.streams.distance_m!;
    const last = a.streams.time_s.at(-1)!;
    const further = { ...a, totals: { ...a.totals, elapsedTimeS: last, distanceM: d.at(-1)! - d[0]! + 3.5 } };
    const [back] = parseActivityFile(new TextEncoder().encode(gpxText(further)), "gpx");
    expect(back!.streams.size).toBe(a.streams.size + 1);
    expect(back!.totals.elapsedTimeS).toBe(last);
    expect(back!.totals.distanceM).toBeCloseTo(further.totals.distanceM, 1);
  });

  it("writes samples without a position at the nearest known one with <fix>none</fix>, and a last point at the activity's end", () => {
    const s = a.streams;
    const noFix = (i: number) => i < 5 || (i >= 100 && i < 110);
    const gappy: ExportInput = {
      ...a,
      streams: { ...s, latlng: s.latlng!.map((p, i) => (noFix(i) ? null : p)) },
      totals: { ...a.totals, elapsedTimeS: a.totals.elapsedTimeS + 30, distanceM: a.totals.distanceM! + 50 },
    };
    const text = gpxText(gappy);
    expect(XMLValidator.validate(text)).toBe(true);
    const pts = xml.parse(text).gpx.trk.trkseg.trkpt as Node[];
    expect(pts).toHaveLength(s.size + 1);
    const pos = (pt: Node) => [Number(pt["@lat"]), Number(pt["@lon"])];
    for (let i = 0; i < s.size; i++) {
      expect(pts[i]!.fix ?? null, `point ${i}`).toBe(noFix(i) ? "none" : null);
      expect(Date.parse(pts[i]!.time as string)).toBe(a.startTime.getTime() + s.time_s[i]! * 1000);
      // The samples' own channels stay on their points.
      expect(n((pts[i]!.extensions as Node).distance)).toBe(s.distance_m![i]);
    }
    expect(pos(pts[0]!)).toEqual(pos(pts[5]!));
    expect(pos(pts[105]!)).toEqual(pos(pts[99]!));
    const end = pts.at(-1)!;
    expect(end.fix).toBe("none");
    expect(Date.parse(end.time as string)).toBe(a.startTime.getTime() + gappy.totals.elapsedTimeS * 1000);
    expect(n((end.extensions as Node).distance)).toBeCloseTo(s.distance_m![0]! + gappy.totals.distanceM!, 6);
    expect(pos(end)).toEqual(pos(pts[s.size - 1]!));
  });

  it("has no points for an activity without any position", () => {
    const { latlng: _l, ...indoor } = a.streams;
    const text = gpxText({ ...a, streams: indoor as Streams });
    expect(XMLValidator.validate(text)).toBe(true);
    expect(text).not.toContain("<trkpt");
  });
});

describe("TCX export", () => {
  const a = syntheticActivity({ hours: 2, sport: "run", seed: 12 });

  it("is well-formed TCX v2 with the laps, their totals and every channel TCX carries", () => {
    const text = tcxText(a);
    expect(XMLValidator.validate(text)).toBe(true);
    const act = xml.parse(text).TrainingCenterDatabase.Activities.Activity;
    expect(act["@Sport"]).toBe("Running");
    expect(new Date(act.Id)).toEqual(a.startTime);
    expect(act.Notes).toBe(a.name);
    const laps = act.Lap as Node[];
    expect(laps.map((l) => (Date.parse(l["@StartTime"] as string) - a.startTime.getTime()) / 1000)).toEqual(a.laps.map((l) => l.startOffsetS));
    expect(laps.map((l) => n(l.TotalTimeSeconds))).toEqual(a.laps.map((l) => l.movingTimeS));
    expect(laps.map((l) => n(l.DistanceMeters))).toEqual(a.laps.map((l) => l.distanceM));
    expect(laps.map((l) => n(l.MaximumSpeed))).toEqual(a.laps.map((l) => l.maxSpeedMps));
    expect(laps.map((l) => n((l.AverageHeartRateBpm as Node).Value)! / 60)).toEqual(a.laps.map((l) => l.averageHeartRateHz));
    expect(laps.map((l) => n(((l.Extensions as Node).LX as Node).AvgWatts))).toEqual(a.laps.map((l) => l.averagePowerW));
    // Moving time is the laps' TotalTimeSeconds together (CONTRACT §11).
    expect(laps.reduce((s, l) => s + n(l.TotalTimeSeconds)!, 0)).toBeCloseTo(a.totals.movingTimeS!, 6);

    const pts = laps.flatMap((l) => ((l.Track as Node).Trackpoint as Node[]) ?? []);
    expect(pts).toHaveLength(a.streams.size);
    const t = pts.map((pt) => Date.parse(pt.Time as string));
    expect(new Date(t[0]!)).toEqual(a.startTime);
    expect((t.at(-1)! - t[0]!) / 1000).toBe(a.totals.elapsedTimeS);
    expect(n(pts.at(-1)!.DistanceMeters)).toBe(a.totals.distanceM);
    const tpx = (pt: Node) => ((pt.Extensions as Node).TPX ?? {}) as Node;
    const back: Streams = {
      size: pts.length,
      time_s: t.map((v) => (v - t[0]!) / 1000),
      latlng: pts.map((pt) => [n((pt.Position as Node).LatitudeDegrees)!, n((pt.Position as Node).LongitudeDegrees)!]),
      distance_m: pts.map((pt) => n(pt.DistanceMeters)),
      altitude_m: pts.map((pt) => n(pt.AltitudeMeters)),
      speed_mps: pts.map((pt) => n(tpx(pt).Speed)),
      heart_rate_hz: pts.map((pt) => (pt.HeartRateBpm == null ? null : n((pt.HeartRateBpm as Node).Value)! / 60)),
      // A run's cadence is in the extension's RunCadence, where a runner's tools read it.
      cadence_hz: pts.map((pt) => n(tpx(pt).RunCadence)! / 60),
      power_w: pts.map((pt) => n(tpx(pt).Watts)),
    };
    expect(pts.filter((pt) => pt.Cadence !== undefined)).toEqual([]);
    const { temperature_c: _t, ...carried } = a.streams;
    expect(atPrecision(back)).toEqual(atPrecision(carried as Streams));
  });

  it("keeps a ride's cadence in Trackpoint's own Cadence, a crank's", () => {
    const ride = syntheticActivity({ hours: 0.05, seed: 3 });
    expect(ride.sport).toBe("ride");
    expect(ride.streams.cadence_hz?.some((c) => c != null)).toBe(true);
    const text = tcxText(ride);
    expect(text).toContain("<Cadence>");
    expect(text).not.toContain("RunCadence");
  });

  it("gives a lap without samples in its span no Track (the schema's Track_t needs a Trackpoint), and reads back its laps", () => {
    // A lap shorter than the recording interval, just before the second lap: no sample in it.
    const next = a.laps[1]!.startOffsetS;
    const short = { ...a.laps[0]!, startOffsetS: next - 0.5, elapsedTimeS: 0.5, movingTimeS: 0.5, distanceM: 1 };
    expect(a.streams.time_s.some((t) => t >= next - 0.5 && t < next)).toBe(false);
    const text = tcxText({ ...a, laps: [a.laps[0]!, short, ...a.laps.slice(1)] });
    expect(text).not.toMatch(/<Track>\s*<\/Track>/);
    const laps = xml.parse(text).TrainingCenterDatabase.Activities.Activity.Lap as Node[];
    expect(laps).toHaveLength(a.laps.length + 1);
    expect(laps[1]!.Track).toBeUndefined();
    expect(laps.filter((l) => l.Track !== undefined)).toHaveLength(a.laps.length);
    const [back] = parseActivityFile(new TextEncoder().encode(text), "tcx");
    expect(back!.laps).toHaveLength(a.laps.length + 1);
  });
});

describe("exportActivity", () => {
  it("answers the contract's content types", () => {
    const a = syntheticActivity({ hours: 0.05, seed: 1 });
    expect(exportActivity("fit", a).contentType).toBe("application/vnd.ant.fit");
    expect(exportActivity("gpx", a).contentType).toBe("application/gpx+xml");
    expect(exportActivity("tcx", a).contentType).toBe("application/vnd.garmin.tcx+xml");
    expect(Buffer.from(exportActivity("gpx", a).bytes).toString("utf8")).toBe(gpxText(a));
  });
});
