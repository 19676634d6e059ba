import { CrcCalculator, Encoder, Profile } from "@garmin/fitsdk";
import type { Lap, Totals } from "../types";
import { mechanicalWorkJ } from "../sanity";
import { at, lapStartOffsetS, PAUSE_GAP_S, perMinute } from "./common";
import {
  ByteSink,
  developerValue,
  encoderFieldDescriptions,
  enumValue,
  EVENT_FIELDS,
  fieldDescriptionMesg,
  MesgWriter,
  RECORD_FIELDS,
  SERVICE_DEVELOPER_DATA_ID_MESG,
  SERVICE_DEVELOPER_FIELDS,
  type DeveloperField,
  type RecordField,
} from "./fit-messages";
import type { ExportInput } from "./types";

const NO_PAUSES: ReadonlySet<number> = new Set();
const nullOrRound = (work: number | null) => (work === null ? null : within(Math.round(work), 0, 4_294_967_294));

/*
 * A FIT activity file in the order Garmin's Activity File guide lays out: file_id, device_info,
 * a timer start event, the records (with timer stop/start events around pauses), the laps, a
 * timer stop, the session, the activity. Values go through @garmin/fitsdk's Encoder, which
 * applies each field's scale and offset from the profile, except the records and the pauses'
 * timer events (./fit-messages.ts writes those, from the same profile).
 *
 * What FIT can hold decides what survives: timestamps are whole seconds, heart rate in whole
 * bpm, cadence in 1/128 rpm, power in watts. A sample within a second has the whole second as its
 * record's timestamp and the milliseconds after it in the service's developer field timestamp_ms,
 * so samples that share a second each keep a record of their own, at their exact time. The
 * native fields keep altitude in 0.2 m steps, temperature in whole °C, and the laps' and
 * session's heart rates in whole bpm, power in whole watts and energy in whole kcal: beside
 * each, a developer field of the service's own application holds the value as the service keeps
 * it (1 cm, 0.1 °C, 0.0001 Hz, 0.1 W, 1 J), for the service's importer to read back exactly
 * (./fit-messages.ts, SERVICE_DEVELOPER_FIELDS). An average speed above the maximum, which only
 * a derived one can be, is written in the service's derived_avg_speed instead of
 * enhanced_avg_speed, so the file read back keeps both (`averageAboveMax`).
 */

const FIT_EPOCH_MS = 631065600000;
const KCAL_J = 4184;
const SEMICIRCLES_PER_DEGREE = 2 ** 31 / 180;

/** The FIT sport and sub-sport for a sport type: the inverse of the import's mapping (CONTRACT §11). */
const FIT_SPORT: Record<ExportInput["sport"], [string, string]> = {
  run: ["running", "generic"],
  trail_run: ["running", "trail"],
  ride: ["cycling", "generic"],
  virtual_ride: ["cycling", "virtualActivity"],
  swim: ["swimming", "generic"],
  walk: ["walking", "generic"],
  hike: ["hiking", "generic"],
  row: ["rowing", "generic"],
  ski: ["crossCountrySkiing", "generic"],
  strength: ["training", "strengthTraining"],
  yoga: ["training", "yoga"],
  other: ["generic", "generic"],
};

/** Seconds since the FIT epoch, whole (FIT's date_time). */
const fitTime = (ms: number) => Math.round((ms - FIT_EPOCH_MS) / 1000);

/** Leaves out what is unknown, so the encoder writes nothing (not a 0) for it. */
function defined<T extends Record<string, unknown>>(mesg: T): T {
  for (const k of Object.keys(mesg)) if (mesg[k] == null || (typeof mesg[k] === "number" && !Number.isFinite(mesg[k]))) delete mesg[k];
  return mesg;
}

const within = (v: number | null, lo: number, hi: number) => (v != null && v >= lo && v <= hi ? v : null);
const bpm = (hz: number | null) => within(hz == null ? null : perMinute(hz), 0, 254);

const DEV = SERVICE_DEVELOPER_FIELDS;

/** The developer values of a lap or session (by field number, as the Encoder's developerFields), only those it has. */
function developerFields(values: [DeveloperField, number | null][]): Record<number, number> | undefined {
  let out: Record<number, number> | undefined;
  for (const [f, v] of values) {
    const stored = developerValue(f, v);
    if (stored !== null) (out ??= {})[f.num] = stored;
  }
  return out;
}

/**
 * Beats per minute of a heart rate total as the service keeps it, to 0.0001 Hz
 * (lib/db/schema/measure.ts), for the developer fields: read back and kept to 0.0001 Hz again,
 * it is the same number.
 */
const exactBpm = (hz: number | null) => (hz == null ? null : (Math.round(hz * 1e4) / 1e4) * 60);

/**
 * An average speed above the maximum: one the service derived from distance and time, which it
 * does not hold to the maximum (lib/files/sanity.ts `merge`, lib/activities/create-activity.ts);
 * a measured one never stands above it (the importer drops such a file's maximum). It goes in the
 * service's derived_avg_speed developer field, not in enhanced_avg_speed (./fit-messages.ts).
 */
const averageAboveMax = (t: Pick<Totals, "averageSpeedMps" | "maxSpeedMps">) =>
  t.averageSpeedMps != null && t.maxSpeedMps != null && t.averageSpeedMps > t.maxSpeedMps;

function totalsMesg(t: Omit<Totals, "energyJ">) {
  const gain = t.elevationGainM == null ? null : Math.max(0, Math.round(t.elevationGainM * 100) / 100);
  return {
    totalElapsedTime: t.elapsedTimeS,
    totalTimerTime: t.movingTimeS ?? t.elapsedTimeS,
    totalDistance: within(t.distanceM, 0, 42_949_672),
    totalAscent: gain == null ? null : within(Math.floor(gain), 0, 65_534),
    totalFractionalAscent: gain == null ? null : Math.round((gain - Math.floor(gain)) * 100) / 100,
    enhancedAvgSpeed: averageAboveMax(t) ? null : within(t.averageSpeedMps, 0, 4_294_967),
    enhancedMaxSpeed: within(t.maxSpeedMps, 0, 4_294_967),
    avgHeartRate: bpm(t.averageHeartRateHz),
    maxHeartRate: bpm(t.maxHeartRateHz),
    avgPower: within(t.averagePowerW == null ? null : Math.round(t.averagePowerW), 0, 65_534),
  };
}

/**
 * The messages fitsdk's Encoder writes for `mesgs` (their definitions included), and the file
 * header it writes; `developer`: the developer fields their `developerFields` hold, whose
 * descriptions an earlier part of the file wrote.
 */
function encoded(mesgs: object[], developer: readonly DeveloperField[] = []): { header: Uint8Array; messages: Uint8Array } {
  const e = new Encoder({ fieldDescriptions: encoderFieldDescriptions(developer) } as never);
  for (const m of mesgs) e.writeMesg(m as never);
  const file = e.close();
  return { header: file.subarray(0, FILE_HEADER_SIZE), messages: file.subarray(FILE_HEADER_SIZE, file.byteLength - 2) };
}

const FILE_HEADER_SIZE = 14;

/**
 * A complete FIT activity file of one session. The messages before and after the records go
 * through the Encoder, each run with its own definitions; the records and the pauses' timer
 * events are written by ./fit-messages.ts on local messages of their own, so the parts join
 * into one valid file.
 */
export function exportFit(a: ExportInput): Uint8Array {
  const { streams, totals } = a;
  const start = a.startTime.getTime();
  // Where the first sample falls after the session's start (a device's session that started a
  // record or more before its first one), in the whole seconds FIT keeps: a GPX or TCX activity's
  // first sample a fraction of a second after its start (kept in whole seconds) stays in the
  // start's second, so the session still ends by its last record as the activity's elapsed time does.
  const firstS = Math.floor(a.firstSampleOffsetS);
  const lastS = firstS + (streams.size ? streams.time_s[streams.size - 1]! : 0);
  // Each sample's instant in milliseconds since the FIT epoch, from the start's whole second (as
  // the session's start_time keeps it): time_s is kept to the millisecond, so this is exact.
  const originMs = (fitTime(start) + firstS) * 1000;
  const sampleMs = (i: number) => originMs + Math.round(streams.time_s[i]! * 1000);
  const elapsed = Math.max(totals.elapsedTimeS, lastS);
  const end = start + elapsed * 1000;
  const [sport, subSport] = FIT_SPORT[a.sport];
  const M = Profile.MesgNum as Record<string, number>;
  const timerEvent = (ms: number, eventType: "start" | "stop" | "stopAll") => ({
    mesgNum: M.EVENT!,
    timestamp: fitTime(ms),
    event: "timer",
    eventType,
    eventGroup: 0,
  });

  const { latlng, distance_m, altitude_m, speed_mps, heart_rate_hz, cadence_hz, power_w, temperature_c } = streams;
  const laps: Lap[] = a.laps.length
    ? a.laps
    : [{ ...totals, startOffsetS: 0, elapsedTimeS: elapsed }];
  // The developer fields of the laps and the session, ahead of the records: their descriptions
  // go before the records, each only where some message has its value.
  const lapDeveloperFields = laps.map((lap) =>
    developerFields([
      [DEV.lapAvgHeartRate, exactBpm(lap.averageHeartRateHz)],
      [DEV.lapMaxHeartRate, exactBpm(lap.maxHeartRateHz)],
      [DEV.lapAvgPower, lap.averagePowerW],
      [DEV.lapDerivedAvgSpeed, averageAboveMax(lap) ? lap.averageSpeedMps : null],
    ]),
  );
  const sessionDeveloperFields = developerFields([
    [DEV.sessionAvgHeartRate, exactBpm(totals.averageHeartRateHz)],
    [DEV.sessionMaxHeartRate, exactBpm(totals.maxHeartRateHz)],
    [DEV.sessionAvgPower, totals.averagePowerW],
    [DEV.sessionTotalCalories, totals.energyJ == null ? null : totals.energyJ / KCAL_J],
    [DEV.sessionDerivedAvgSpeed, averageAboveMax(totals) ? totals.averageSpeedMps : null],
  ]);
  const recordDeveloperFields: Partial<Record<"recordAltitude" | "recordTemperature" | "recordTimestampMs", DeveloperField>> = {};
  if (altitude_m) recordDeveloperFields.recordAltitude = DEV.recordAltitude;
  if (temperature_c) recordDeveloperFields.recordTemperature = DEV.recordTemperature;
  // Only an activity with a sample within a second: one timed in whole seconds has records as before.
  let fractional = false;
  for (let i = 0; i < streams.size && !fractional; i++) fractional = sampleMs(i) % 1000 !== 0;
  if (fractional) recordDeveloperFields.recordTimestampMs = DEV.recordTimestampMs;
  const written = new Set<number>([...lapDeveloperFields, sessionDeveloperFields].flatMap((d) => Object.keys(d ?? {}).map(Number)));
  const used = Object.values(DEV).filter((f) => written.has(f.num) || Object.values(recordDeveloperFields).includes(f));

  const opening = encoded([
    {
      mesgNum: M.FILE_ID!,
      type: "activity",
      manufacturer: "development",
      product: 0,
      serialNumber: 1,
      timeCreated: fitTime(start),
    },
    {
      mesgNum: M.DEVICE_INFO!,
      timestamp: fitTime(start),
      deviceIndex: "creator",
      manufacturer: "development",
      product: 0,
      serialNumber: 1,
    },
    timerEvent(start, "start"),
    ...(used.length ? [SERVICE_DEVELOPER_DATA_ID_MESG, ...used.map(fieldDescriptionMesg)] : []),
  ]);
  const sink = new ByteSink();
  sink.reserve(FILE_HEADER_SIZE);
  sink.length = FILE_HEADER_SIZE;
  sink.append(opening.messages);

  const carried: Record<RecordField, boolean> = {
    timestamp: true,
    positionLat: !!latlng,
    positionLong: !!latlng,
    distance: !!distance_m,
    enhancedAltitude: !!altitude_m,
    altitude: !!altitude_m,
    enhancedSpeed: !!speed_mps,
    speed: !!speed_mps,
    heartRate: !!heart_rate_hz,
    cadence: !!cadence_hz,
    fractionalCadence: !!cadence_hz,
    power: !!power_w,
    temperature: !!temperature_c,
  };
  const records = new MesgWriter(sink, "record", RECORD_FIELDS.filter((f) => carried[f]), recordDeveloperFields);
  const events = new MesgWriter(sink, "event", EVENT_FIELDS);
  const [timer, stop, startType] = [enumValue("event", "timer"), enumValue("eventType", "stop"), enumValue("eventType", "start")];
  const values = {} as Record<RecordField | "recordAltitude" | "recordTemperature" | "recordTimestampMs", number | null>;

  let prevMs = -Infinity;
  let prevS = 0;
  for (let i = 0; i < streams.size; i++) {
    const ms = sampleMs(i);
    if (ms <= prevMs) continue;
    const second = Math.floor(ms / 1000);
    if (i > 0 && streams.time_s[i]! - prevS >= PAUSE_GAP_S) {
      // The stop no earlier than the last record's exact time, so a reader sees the pause after it.
      events.write({ timestamp: Math.ceil(prevMs / 1000), event: timer, eventType: stop, eventGroup: 0 });
      events.write({ timestamp: second, event: timer, eventType: startType, eventGroup: 0 });
    }
    prevMs = ms;
    prevS = streams.time_s[i]!;
    const p = latlng?.[i];
    const alt = within(at(altitude_m, i), -500, 12_000);
    const speed = within(at(speed_mps, i), 0, 4_294_967);
    const rpm = cadence_hz ? at(cadence_hz, i) : null;
    const cadence = rpm == null ? null : within(rpm * 60, 0, 254.99);
    const temperature = at(temperature_c, i);
    const power = at(power_w, i);
    values.timestamp = second;
    values.positionLat = p ? Math.round(p[0] * SEMICIRCLES_PER_DEGREE) : null;
    values.positionLong = p ? Math.round(p[1] * SEMICIRCLES_PER_DEGREE) : null;
    values.distance = within(at(distance_m, i), 0, 42_949_672);
    values.enhancedAltitude = alt;
    values.altitude = alt;
    values.enhancedSpeed = speed;
    values.speed = within(speed, 0, 65.534);
    values.heartRate = bpm(at(heart_rate_hz, i));
    values.cadence = cadence == null ? null : Math.floor(cadence);
    values.fractionalCadence = cadence == null ? null : Math.round((cadence - Math.floor(cadence)) * 128) / 128;
    values.power = within(power == null ? null : Math.round(power), 0, 65_534);
    values.temperature = within(temperature == null ? null : Math.round(temperature), -127, 127);
    values.recordAltitude = alt;
    values.recordTemperature = temperature;
    values.recordTimestampMs = ms - second * 1000;
    records.write(values);
  }

  const closing: object[] = laps.map((lap, index) => {
    const lapStart = start + lapStartOffsetS(lap, firstS) * 1000;
    return defined({
      mesgNum: M.LAP!,
      messageIndex: index,
      timestamp: fitTime(lapStart + lap.elapsedTimeS * 1000),
      startTime: fitTime(lapStart),
      event: "lap",
      eventType: "stop",
      lapTrigger: index === laps.length - 1 ? "sessionEnd" : "manual",
      sport,
      subSport,
      ...totalsMesg(lap),
      developerFields: lapDeveloperFields[index],
    });
  });
  closing.push(
    timerEvent(end, "stopAll"),
    defined({
      mesgNum: M.SESSION!,
      messageIndex: 0,
      timestamp: fitTime(end),
      startTime: fitTime(start),
      event: "session",
      eventType: "stop",
      trigger: "activityEnd",
      sport,
      subSport,
      firstLapIndex: 0,
      numLaps: laps.length,
      ...totalsMesg({ ...totals, elapsedTimeS: elapsed }),
      // Mechanical work, from the power samples (not energy_j, the metabolic energy: some 4.2×
      // the work, which other tools would have shown as the ride's work).
      totalWork: nullOrRound(mechanicalWorkJ(streams, NO_PAUSES, 0, streams.size - 1)),
      totalCalories: within(totals.energyJ == null ? null : Math.round(totals.energyJ / KCAL_J), 0, 65_534),
      developerFields: sessionDeveloperFields,
    }),
    {
      mesgNum: M.ACTIVITY!,
      timestamp: fitTime(end),
      // The end on the athlete's wall clock, as devices write it: what other tools show local time by.
      ...(a.utcOffsetS != null ? { localTimestamp: fitTime(end) + a.utcOffsetS } : {}),
      totalTimerTime: totals.movingTimeS ?? elapsed,
      numSessions: 1,
      type: "manual",
      event: "activity",
      eventType: "stop",
    },
  );
  sink.append(encoded(closing, used).messages);

  // The header the Encoder wrote, with this file's data size and the CRCs over what was joined.
  const view = sink.reserve(2);
  sink.bytes.set(opening.header.subarray(0, 12), 0);
  view.setUint32(4, sink.length - FILE_HEADER_SIZE, true);
  view.setUint16(12, CrcCalculator.calculateCRC(sink.bytes, 0, 12), true);
  view.setUint16(sink.length, CrcCalculator.calculateCRC(sink.bytes, 0, sink.length), true);
  sink.length += 2;
  return sink.bytes.slice();
}
