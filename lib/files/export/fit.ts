import { Encoder, Profile } from "@garmin/fitsdk";
import type { Lap, Totals } from "../types";
import { at, PAUSE_GAP_S, perMinute } from "./common";
import type { ExportInput } from "./types";

/*
 * A FIT activity file in the order Garmin's Activity File guide lays out: file_id, device_info,
 * a timer start event, the records (with timer stop/start events around pauses), the laps, a
 * timer stop, the session, the activity. Values go through @garmin/fitsdk's Encoder, which
 * applies each field's scale and offset from the profile.
 *
 * What FIT can hold decides what survives: timestamps are whole seconds (a sample finer than
 * that shares its second with the one before and is left out), altitude is kept in 0.2 m
 * steps, heart rate in whole bpm, cadence in 1/128 rpm, power in watts, temperature in whole °C.
 */

const FIT_EPOCH_MS = 631065600000;
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

function totalsMesg(t: Omit<Totals, "energyJ">) {
  const gain = t.elevationGainM == null ? null : Math.max(0, Math.round(t.elevationGainM * 100) / 100);
  return {
    totalElapsedTime: t.elapsedTimeS,
    totalTimerTime: t.movingTimeS ?? t.elapsedTimeS,
    totalDistance: within(t.distanceM, 0, 42_949_672),
    totalAscent: gain == null ? null : within(Math.floor(gain), 0, 65_534),
    totalFractionalAscent: gain == null ? null : Math.round((gain - Math.floor(gain)) * 100) / 100,
    enhancedAvgSpeed: within(t.averageSpeedMps, 0, 4_294_967),
    enhancedMaxSpeed: within(t.maxSpeedMps, 0, 4_294_967),
    avgHeartRate: bpm(t.averageHeartRateHz),
    maxHeartRate: bpm(t.maxHeartRateHz),
    avgPower: within(t.averagePowerW == null ? null : Math.round(t.averagePowerW), 0, 65_534),
  };
}

/** A complete FIT activity file of one session. */
export function exportFit(a: ExportInput): Uint8Array {
  const { streams, totals } = a;
  const start = a.startTime.getTime();
  const lastS = streams.size ? streams.time_s[streams.size - 1]! : 0;
  const elapsed = Math.max(totals.elapsedTimeS, lastS);
  const end = start + elapsed * 1000;
  const [sport, subSport] = FIT_SPORT[a.sport];
  const M = Profile.MesgNum as Record<string, number>;

  const e = new Encoder();
  e.writeMesg({
    mesgNum: M.FILE_ID!,
    type: "activity",
    manufacturer: "development",
    product: 0,
    serialNumber: 1,
    timeCreated: fitTime(start),
  } as never);
  e.writeMesg({
    mesgNum: M.DEVICE_INFO!,
    timestamp: fitTime(start),
    deviceIndex: "creator",
    manufacturer: "development",
    product: 0,
    serialNumber: 1,
  } as never);
  const timerEvent = (ms: number, eventType: "start" | "stop" | "stopAll") =>
    e.writeMesg({ mesgNum: M.EVENT!, timestamp: fitTime(ms), event: "timer", eventType, eventGroup: 0 } as never);
  timerEvent(start, "start");

  const { latlng, distance_m, altitude_m, speed_mps, heart_rate_hz, cadence_hz, power_w, temperature_c } = streams;
  let prevSecond = -Infinity;
  let prevS = 0;
  for (let i = 0; i < streams.size; i++) {
    const ms = start + streams.time_s[i]! * 1000;
    const second = fitTime(ms);
    if (second <= prevSecond) continue;
    if (i > 0 && streams.time_s[i]! - prevS >= PAUSE_GAP_S) {
      timerEvent(start + prevS * 1000, "stop");
      timerEvent(ms, "start");
    }
    prevSecond = second;
    prevS = streams.time_s[i]!;
    const p = latlng?.[i];
    const alt = within(at(altitude_m, i), -500, 12_000);
    const speed = within(at(speed_mps, i), 0, 4_294_967);
    const rpm = cadence_hz ? at(cadence_hz, i) : null;
    const cadence = rpm == null ? null : within(rpm * 60, 0, 254.99);
    const temperature = at(temperature_c, i);
    e.writeMesg(
      defined({
        mesgNum: M.RECORD!,
        timestamp: second,
        positionLat: p ? Math.round(p[0] * SEMICIRCLES_PER_DEGREE) : null,
        positionLong: p ? Math.round(p[1] * SEMICIRCLES_PER_DEGREE) : null,
        distance: within(at(distance_m, i), 0, 42_949_672),
        enhancedAltitude: alt,
        altitude: alt,
        enhancedSpeed: speed,
        speed: within(speed, 0, 65.534),
        heartRate: bpm(at(heart_rate_hz, i)),
        cadence: cadence == null ? null : Math.floor(cadence),
        fractionalCadence: cadence == null ? null : Math.round((cadence - Math.floor(cadence)) * 128) / 128,
        power: within(at(power_w, i) == null ? null : Math.round(at(power_w, i)!), 0, 65_534),
        temperature: within(temperature == null ? null : Math.round(temperature), -127, 127),
      }) as never,
    );
  }

  const laps: Lap[] = a.laps.length
    ? a.laps
    : [{ ...totals, startOffsetS: 0, elapsedTimeS: elapsed }];
  laps.forEach((lap, index) => {
    const lapStart = start + lap.startOffsetS * 1000;
    e.writeMesg(
      defined({
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
      }) as never,
    );
  });
  timerEvent(end, "stopAll");

  e.writeMesg(
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
      totalWork: within(totals.energyJ == null ? null : Math.round(totals.energyJ), 0, 4_294_967_294),
      totalCalories: within(totals.energyJ == null ? null : Math.round(totals.energyJ / 4184), 0, 65_534),
    }) as never,
  );
  e.writeMesg({
    mesgNum: M.ACTIVITY!,
    timestamp: fitTime(end),
    totalTimerTime: totals.movingTimeS ?? elapsed,
    numSessions: 1,
    type: "manual",
    event: "activity",
    eventType: "stop",
  } as never);
  return e.close();
}
