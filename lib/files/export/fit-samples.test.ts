import { SAMPLES_DIR } from "../testing/samples";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Decoder, Stream } from "@garmin/fitsdk";
import { describe, expect, it } from "vitest";
import { atPrecision } from "../stream-arbitraries";
import type { Lap, Streams, Totals } from "../types";
import { exportFit } from "./fit";
import type { ExportInput } from "./types";

/*
 * Real device files through the FIT exporter: each sample's first session, read with fitsdk's
 * Decoder into an export input, exported, and read back the same way, must give the same
 * samples and totals. The reader here is deliberately plain (the service's importer is tested
 * on its own); what it exercises is the exporter on what devices really record: compressed
 * timestamps, missing sensors, pauses, odd sports.
 */

const DIR = path.join(SAMPLES_DIR, "fit");
// The samples are in the repository: a missing or empty folder (a mistyped SAMPLES_DIR) fails
// here, rather than skipping every check below.
const files = readdirSync(DIR).filter((f) => f.endsWith(".fit"));

type Mesgs = ReturnType<Decoder["read"]>["messages"];
type Rec = NonNullable<Mesgs["recordMesgs"]>[number] & Record<string, unknown>;
type Tot = Record<string, unknown>;

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
const SEMI = 180 / 2 ** 31;

/** `strict` for what the exporter wrote; a device's file may hold what fitsdk cannot read (compressed timestamps, a damaged tail): what it did read is used. */
function read(bytes: Uint8Array, strict: boolean): Mesgs {
  const { messages, errors } = new Decoder(Stream.fromByteArray(Array.from(bytes))).read();
  if (strict) expect(errors).toEqual([]);
  return messages;
}

function totalsOf(m: Tot): Omit<Totals, "energyJ"> {
  return {
    elapsedTimeS: num(m.totalElapsedTime) ?? 0,
    movingTimeS: num(m.totalTimerTime),
    distanceM: num(m.totalDistance),
    elevationGainM: num(m.totalAscent),
    averageSpeedMps: num(m.enhancedAvgSpeed) ?? num(m.avgSpeed),
    maxSpeedMps: num(m.enhancedMaxSpeed) ?? num(m.maxSpeed),
    averageHeartRateHz: num(m.avgHeartRate) == null ? null : num(m.avgHeartRate)! / 60,
    maxHeartRateHz: num(m.maxHeartRate) == null ? null : num(m.maxHeartRate)! / 60,
    averagePowerW: num(m.avgPower),
  };
}

/** The first session of a FIT file as an export input: one record per second, in order. */
function toInput(m: Mesgs): ExportInput | null {
  const session = m.sessionMesgs?.[0] as Tot | undefined;
  const records = (m.recordMesgs ?? []) as Rec[];
  if (!records.length) return null;
  const start = session?.startTime instanceof Date ? session.startTime : (records[0]!.timestamp as Date);
  const totals = session ? totalsOf(session) : null;
  const endMs = totals ? start.getTime() + totals.elapsedTimeS * 1000 : Infinity;
  const kept: Rec[] = [];
  let last = -Infinity;
  for (const r of records) {
    const t = (r.timestamp as Date | undefined)?.getTime();
    if (t == null || t < start.getTime() || t > endMs || t <= last) continue;
    kept.push(r);
    last = t;
  }
  if (!kept.length) return null;
  const has = (f: (r: Rec) => unknown) => kept.some((r) => num(f(r)) != null);
  const col = (f: (r: Rec) => unknown) => kept.map((r) => num(f(r)));
  const streams: Streams = { size: kept.length, time_s: kept.map((r) => ((r.timestamp as Date).getTime() - start.getTime()) / 1000) };
  if (has((r) => r.positionLat)) streams.latlng = kept.map((r) => (num(r.positionLat) == null || num(r.positionLong) == null ? null : [r.positionLat! * SEMI, r.positionLong! * SEMI]));
  if (has((r) => r.distance)) streams.distance_m = col((r) => r.distance);
  if (has((r) => r.enhancedAltitude ?? r.altitude)) streams.altitude_m = col((r) => r.enhancedAltitude ?? r.altitude);
  if (has((r) => r.enhancedSpeed ?? r.speed)) streams.speed_mps = col((r) => r.enhancedSpeed ?? r.speed);
  if (has((r) => r.heartRate)) streams.heart_rate_hz = col((r) => (num(r.heartRate) == null ? null : r.heartRate! / 60));
  if (has((r) => r.cadence)) streams.cadence_hz = col((r) => (num(r.cadence) == null ? null : (r.cadence! + (num(r.fractionalCadence) ?? 0)) / 60));
  if (has((r) => r.power)) streams.power_w = col((r) => r.power);
  if (has((r) => r.temperature)) streams.temperature_c = col((r) => r.temperature);
  const laps: Lap[] = ((m.lapMesgs ?? []) as Tot[])
    .filter((l) => l.startTime instanceof Date && (l.startTime as Date).getTime() >= start.getTime() && (l.startTime as Date).getTime() <= endMs)
    .map((l) => ({ ...totalsOf(l), startOffsetS: ((l.startTime as Date).getTime() - start.getTime()) / 1000 }));
  const lastS = streams.time_s.at(-1)!;
  return {
    sport: "other",
    startTime: start,
    // time_s counts from the session's start here, not from the first record.
    firstSampleOffsetS: 0,
    name: "sample",
    // Energy as the activity keeps it: the calories the device gives (total_work is the
    // mechanical work, written from the power samples).
    totals: { ...(totals ?? totalsOf({ totalElapsedTime: lastS })), energyJ: num(session?.totalCalories) == null ? null : num(session?.totalCalories)! * 4184 },
    streams,
    laps,
  };
}

describe("FIT export of real device files", () => {
  const exported: string[] = [];
  it(`finds the FIT samples in ${DIR}`, () => expect(files.length).toBeGreaterThan(0));
  for (const file of files) {
    it(`${file}: the same samples and totals back`, () => {
      const input = toInput(read(readFileSync(path.join(DIR, file)), false));
      if (!input) return; // nothing fitsdk could read as records: nothing to export
      const back = toInput(read(exportFit(input), true));
      exported.push(file);
      expect(back).not.toBeNull();
      expect(back!.startTime).toEqual(input.startTime);
      expect(atPrecision(back!.streams)).toEqual(atPrecision(input.streams));
      const lastS = input.streams.time_s.at(-1)!;
      expect(back!.totals).toEqual({ ...input.totals, elapsedTimeS: Math.max(input.totals.elapsedTimeS, lastS), movingTimeS: input.totals.movingTimeS ?? back!.totals.movingTimeS });
      if (input.laps.length) expect(back!.laps.map((l) => l.startOffsetS)).toEqual(input.laps.map((l) => l.startOffsetS));
    });
  }

  it("exported most of the samples (the check above is not vacuous)", () => {
    console.info(`FIT samples exported and read back: ${exported.length} of ${files.length}`);
    expect(exported.length).toBeGreaterThanOrEqual(files.length - 2);
  });
});
