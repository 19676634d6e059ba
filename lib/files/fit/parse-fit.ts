import { Decoder, Stream } from "@garmin/fitsdk";
import { FileError, type ParsedActivity } from "../types";
import { LIMITS, SampleBudget, SampleBuilder, finishActivity, noActivityData, type Declared, type DeclaredLap } from "../sanity";
import { fitSport } from "../sport";
import { FIT_EPOCH_S, frameFit } from "./frame";

type Mesg = Record<string, unknown>;

const SEMICIRCLE_TO_DEG = 180 / 2 ** 31;
const KCAL_TO_J = 4184;

/** A finite number, or null (fitsdk leaves invalid values out, and an array field is no sample). */
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
/**
 * A FIT date_time (seconds since 1989-12-31, as decoded with convertDateTimesToDates off) as Unix
 * seconds. Values below 0x10000000 are seconds since the device powered on (a device without a
 * clock fix, compressed-speed-distance.fit); they are kept: the samples' order and spacing are
 * right, and only the date is the device's guess.
 */
const unix = (v: unknown): number | null => {
  const n = num(v);
  return n === null || n < 0 ? null : n + FIT_EPOCH_S;
};
const bpmToHz = (v: unknown) => {
  const n = num(v);
  return n === null ? null : n / 60;
};

/** Decodes the messages, with the options that keep the work after decode cheap. */
function decode(bytes: Uint8Array): Record<string, Mesg[]> {
  const read = (mergeHeartRates: boolean) =>
    new Decoder(Stream.fromBuffer(bytes)).read({
      // Dates stay FIT epoch numbers: no Date object per record, plain arithmetic after.
      convertDateTimesToDates: false,
      // Components expand compressed speed/distance and altitude/speed into their enhanced fields.
      expandComponents: true,
      expandSubFields: true,
      applyScaleAndOffset: true,
      convertTypesToStrings: true,
      includeUnknownData: false,
      mergeHeartRates,
    });
  let result = read(true);
  // Heart rate messages (HRM-Pro, swim) that do not follow the protocol's anchoring make the
  // merge throw; the records themselves are still good.
  if (result.errors.length > 0) result = read(false);
  if (result.errors.length > 0) {
    const e = result.errors[0];
    const detail = e instanceof Error ? e.message.replace(/^FIT Runtime Error\s*/, "").trim() : "";
    throw new FileError("invalid_file", `The FIT file could not be decoded${detail ? ` (${detail})` : ""}: it is damaged or uses a structure this service does not read.`);
  }
  return result.messages as unknown as Record<string, Mesg[]>;
}

type Record_ = { t: number; m: Mesg };

function pushRecord(builder: SampleBuilder, r: Record_) {
  const m = r.m;
  const lat = num(m.positionLat);
  const lng = num(m.positionLong);
  const cadence = num(m.cadence);
  const fractional = num(m.fractionalCadence);
  builder.push({
    t: r.t,
    lat: lat === null ? null : lat * SEMICIRCLE_TO_DEG,
    lng: lng === null ? null : lng * SEMICIRCLE_TO_DEG,
    distanceM: num(m.distance),
    altitudeM: num(m.enhancedAltitude) ?? num(m.altitude),
    speedMps: num(m.enhancedSpeed) ?? num(m.speed),
    heartRateBpm: num(m.heartRate),
    cadenceRpm: cadence === null ? null : cadence + (fractional ?? 0),
    powerW: num(m.power),
    temperatureC: num(m.temperature),
  });
}

/** Instants (Unix seconds) at which the timer stopped: the samples after one start a new segment. */
function timerStops(events: Mesg[] | undefined): number[] {
  const stops: number[] = [];
  for (const e of events ?? []) {
    if (e.event !== "timer") continue;
    if (e.eventType !== "stop" && e.eventType !== "stopAll" && e.eventType !== "stopDisableAll") continue;
    const t = unix(e.timestamp);
    if (t !== null) stops.push(t);
  }
  return stops.sort((a, b) => a - b);
}

function declaredTotals(m: Mesg): Declared {
  return {
    elapsedTimeS: num(m.totalElapsedTime),
    movingTimeS: num(m.totalTimerTime),
    distanceM: num(m.totalDistance),
    elevationGainM: num(m.totalAscent),
    averageSpeedMps: num(m.enhancedAvgSpeed) ?? num(m.avgSpeed),
    maxSpeedMps: num(m.enhancedMaxSpeed) ?? num(m.maxSpeed),
    averageHeartRateHz: bpmToHz(m.avgHeartRate),
    maxHeartRateHz: bpmToHz(m.maxHeartRate),
    averagePowerW: num(m.avgPower),
    energyJ: num(m.totalCalories) === null ? null : num(m.totalCalories)! * KCAL_TO_J,
  };
}

/**
 * A total of 0 for a channel the samples never recorded is the device saying "no sensor", not a
 * measurement (an indoor ride's session gives distance 0): the contract wants null there.
 */
function withoutUnrecorded(d: Declared, builder: SampleBuilder): Declared {
  const has = (k: keyof SampleBuilder["ch"]) => builder.ch[k].some((v) => v !== null);
  const hasPos = builder.latlng.some((p) => p !== null);
  const zeroToNull = (v: number | null | undefined, recorded: boolean) => (v === 0 && !recorded ? null : v);
  const moved = has("distance_m") || has("speed_mps") || hasPos;
  return {
    ...d,
    distanceM: zeroToNull(d.distanceM, moved),
    averageSpeedMps: zeroToNull(d.averageSpeedMps, moved),
    maxSpeedMps: zeroToNull(d.maxSpeedMps, moved),
    elevationGainM: zeroToNull(d.elevationGainM, has("altitude_m")),
    averageHeartRateHz: zeroToNull(d.averageHeartRateHz, has("heart_rate_hz")),
    maxHeartRateHz: zeroToNull(d.maxHeartRateHz, has("heart_rate_hz")),
    averagePowerW: zeroToNull(d.averagePowerW, has("power_w")),
  };
}

function declaredLaps(laps: Mesg[], from: number, to: number, builder: SampleBuilder): DeclaredLap[] {
  const out: DeclaredLap[] = [];
  for (const l of laps) {
    const start = unix(l.startTime);
    if (start === null || start < from || start > to) continue;
    out.push({ startS: start, endS: unix(l.timestamp), totals: withoutUnrecorded(declaredTotals(l), builder) });
  }
  return out;
}

/** Every activity of a FIT file: one per session, in order; a file of records without a session gives one. */
export function parseFit(content: Uint8Array): ParsedActivity[] {
  const framed = frameFit(content);
  const messages = decode(framed.bytes);

  const records: Record_[] = [];
  for (const m of messages.recordMesgs ?? []) {
    const t = unix(m.timestamp);
    if (t !== null) records.push({ t, m });
  }
  if (records.length === 0) {
    throw noActivityData("The FIT file holds no timed samples (it is a settings, workout or other file, not a recorded activity).");
  }
  if (records.length > LIMITS.samplesPerFile) {
    throw new FileError("invalid_file", `The FIT file holds more than ${LIMITS.samplesPerFile.toLocaleString("en-US")} samples, more than any real activity records.`);
  }
  const sorted = records.every((r, i) => i === 0 || r.t >= records[i - 1]!.t);
  const stops = timerStops(messages.eventMesgs);
  const budget = new SampleBudget();
  const laps = messages.lapMesgs ?? [];
  if (laps.length > LIMITS.lapsPerActivity) {
    throw new FileError("invalid_file", `The FIT file holds ${laps.length.toLocaleString("en-US")} laps; at most ${LIMITS.lapsPerActivity.toLocaleString("en-US")} are read from one file.`);
  }

  /** Builds the samples within [from, to] (Unix seconds), in file order. */
  const collect = (from: number, to: number) => {
    const builder = new SampleBuilder(budget);
    let i = 0;
    if (sorted) {
      let lo = 0;
      let hi = records.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (records[mid]!.t < from) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    let s = 0;
    let lastT = -Infinity;
    for (; i < records.length; i++) {
      const r = records[i]!;
      if (r.t > to) {
        if (sorted) break;
        continue;
      }
      if (r.t < from) continue;
      while (s < stops.length && stops[s]! < lastT) s++;
      if (s < stops.length && stops[s]! >= lastT && stops[s]! < r.t && builder.size > 0) {
        builder.pause();
        s++;
      }
      pushRecord(builder, r);
      if (builder.size > 0) lastT = builder.t[builder.size - 1]!;
    }
    return builder;
  };

  const sessions = (messages.sessionMesgs ?? []).filter((s) => unix(s.startTime) !== null || unix(s.timestamp) !== null);
  if (sessions.length > LIMITS.activitiesPerFile) {
    throw new FileError("invalid_file", `The FIT file holds ${sessions.length} sessions; at most ${LIMITS.activitiesPerFile} activities are read from one file.`);
  }

  /** One activity from every record, its totals computed: for a file whose sessions do not frame them. */
  const fromAllRecords = (sport: Mesg | undefined): ParsedActivity[] => {
    const builder = collect(-Infinity, Infinity);
    return [
      finishActivity({
        sport: fitSport(sport?.sport, sport?.subSport),
        name: null,
        samples: builder,
        declared: {},
        laps: declaredLaps(laps, -Infinity, Infinity, builder),
        ordinal: 1,
      }),
    ];
  };

  const activities: ParsedActivity[] = [];
  if (sessions.length === 0) return fromAllRecords(messages.sportMesgs?.[0]);

  for (const [i, s] of sessions.entries()) {
    const elapsed = num(s.totalElapsedTime);
    const end = unix(s.timestamp);
    const start = unix(s.startTime) ?? (end !== null && elapsed !== null ? end - elapsed : end!);
    // The session's own span; without an elapsed time, up to its closing timestamp.
    const until = elapsed !== null ? start + elapsed : (end ?? Infinity);
    const builder = collect(start, until);
    if (builder.size === 0) continue;
    activities.push(
      finishActivity({
        sport: fitSport(s.sport, s.subSport),
        startS: start,
        name: null,
        samples: builder,
        declared: withoutUnrecorded(declaredTotals(s), builder),
        laps: declaredLaps(laps, start, until, builder),
        ordinal: i + 1,
      }),
    );
  }
  // Sessions whose times frame none of the records (a device that wrote its session in local
  // time, or with a start of 0) say nothing reliable about where the activity is: the records do.
  if (activities.length === 0) return fromAllRecords(sessions[0]);
  return activities;
}
