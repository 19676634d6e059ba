import { Encoder, Profile } from "@garmin/fitsdk";

// FIT files built with the SDK's own Encoder, for cases no sample covers (multisport, pauses,
// sensors that drop out, a 4-hour ride). Each describes what a device would write; the tests
// compare the parser's answer with these inputs, not with the parser's own arithmetic.

export type RecordSpec = {
  /** Seconds after the file's start. */
  at: number;
  lat?: number;
  lng?: number;
  distance?: number;
  altitude?: number;
  speed?: number;
  heartRate?: number;
  cadence?: number;
  power?: number;
  temperature?: number;
};

export type SessionSpec = {
  sport: string;
  subSport?: string;
  /** Session fields left out, as some writers do. */
  omit?: ("sport" | "startTime" | "elapsed")[];
  /** Whether the session names its laps (first_lap_index, num_laps), as most devices do. */
  lapIndices?: boolean;
  /** Seconds after the file's start. */
  start: number;
  /** The start_time written, where a broken writer gives one other than `start` (its timestamp stays `start` + `elapsed`). */
  writtenStart?: number;
  /** The timestamp written (the session's end), where a writer gives one other than `start` + `elapsed`. */
  writtenEnd?: number;
  elapsed: number;
  timer?: number;
  distance?: number;
  calories?: number;
  avgHeartRate?: number;
  maxHeartRate?: number;
  records: RecordSpec[];
  /** `noStartTime`: the lap gives only its timestamp (its end) and its elapsed time. */
  laps?: { start: number; elapsed: number; distance?: number; noStartTime?: boolean; sport?: string; fields?: Record<string, unknown> }[];
  /** More session fields as a writer gives them (`{ avgPower: 0 }`). */
  fields?: Record<string, unknown>;
  /** Timer stop/start pairs, seconds after the file's start. */
  pauses?: { stop: number; start: number }[];
};

const DEG_TO_SEMICIRCLES = 2 ** 31 / 180;
export const FILE_START = new Date("2024-05-01T08:00:00Z");
const at = (s: number) => new Date(FILE_START.getTime() + s * 1000);

function writeRecord(e: Encoder, r: RecordSpec) {
  const mesg: Record<string, unknown> = { mesgNum: Profile.MesgNum.RECORD, timestamp: at(r.at) };
  if (r.lat !== undefined) mesg.positionLat = Math.round(r.lat * DEG_TO_SEMICIRCLES);
  if (r.lng !== undefined) mesg.positionLong = Math.round(r.lng * DEG_TO_SEMICIRCLES);
  if (r.distance !== undefined) mesg.distance = r.distance;
  if (r.altitude !== undefined) mesg.enhancedAltitude = r.altitude;
  if (r.speed !== undefined) mesg.enhancedSpeed = r.speed;
  if (r.heartRate !== undefined) mesg.heartRate = r.heartRate;
  if (r.cadence !== undefined) mesg.cadence = r.cadence;
  if (r.power !== undefined) mesg.power = r.power;
  if (r.temperature !== undefined) mesg.temperature = r.temperature;
  e.writeMesg(mesg as never);
}

/**
 * A FIT activity file: sessions in order, each with its records, laps and timer pauses.
 * `fileType` is file_id.type; `sports` are SPORT messages, written before the sessions.
 */
export function buildFit(
  sessions: SessionSpec[],
  { withSessions = true, fileType = "activity", sports = [] as { sport: string; subSport?: string }[] } = {},
): Uint8Array {
  const e = new Encoder();
  e.writeMesg({ mesgNum: Profile.MesgNum.FILE_ID, type: fileType, manufacturer: "development", product: 0, timeCreated: FILE_START, serialNumber: 1 } as never);
  for (const sport of sports) e.writeMesg({ mesgNum: Profile.MesgNum.SPORT, ...sport } as never);
  let lapIndex = 0;
  for (const s of sessions) {
    const firstLap = lapIndex;
    e.writeMesg({ mesgNum: Profile.MesgNum.EVENT, timestamp: at(s.start), event: "timer", eventType: "start" } as never);
    const pauses = [...(s.pauses ?? [])];
    for (const r of s.records) {
      while (pauses.length && pauses[0]!.stop <= r.at) {
        const p = pauses.shift()!;
        e.writeMesg({ mesgNum: Profile.MesgNum.EVENT, timestamp: at(p.stop), event: "timer", eventType: "stop" } as never);
        e.writeMesg({ mesgNum: Profile.MesgNum.EVENT, timestamp: at(p.start), event: "timer", eventType: "start" } as never);
      }
      writeRecord(e, r);
    }
    for (const l of s.laps ?? []) {
      e.writeMesg({
        mesgNum: Profile.MesgNum.LAP,
        ...(s.lapIndices ? { messageIndex: lapIndex } : {}),
        timestamp: at(l.start + l.elapsed),
        ...(l.noStartTime ? {} : { startTime: at(l.start) }),
        totalElapsedTime: l.elapsed,
        totalTimerTime: l.elapsed,
        ...(l.distance !== undefined ? { totalDistance: l.distance } : {}),
        ...(l.sport !== undefined ? { sport: l.sport } : {}),
        ...l.fields,
      } as never);
      lapIndex++;
    }
    if (withSessions) {
      const omit = new Set(s.omit);
      e.writeMesg({
        mesgNum: Profile.MesgNum.SESSION,
        timestamp: at(s.writtenEnd ?? s.start + s.elapsed),
        ...(omit.has("startTime") ? {} : { startTime: at(s.writtenStart ?? s.start) }),
        ...(omit.has("elapsed") ? {} : { totalElapsedTime: s.elapsed, totalTimerTime: s.timer ?? s.elapsed }),
        ...(omit.has("sport") ? {} : { sport: s.sport }),
        ...(s.lapIndices ? { firstLapIndex: firstLap, numLaps: lapIndex - firstLap } : {}),
        ...(s.subSport ? { subSport: s.subSport } : {}),
        ...(s.distance !== undefined ? { totalDistance: s.distance } : {}),
        ...(s.calories !== undefined ? { totalCalories: s.calories } : {}),
        ...(s.avgHeartRate !== undefined ? { avgHeartRate: s.avgHeartRate } : {}),
        ...(s.maxHeartRate !== undefined ? { maxHeartRate: s.maxHeartRate } : {}),
        ...s.fields,
      } as never);
    }
  }
  return e.close();
}

/** `seconds` of 1 Hz riding from `start`, every channel, along a line north from Zurich. */
export function rideRecords(start: number, seconds: number, { distanceFrom = 0 } = {}): RecordSpec[] {
  const out: RecordSpec[] = [];
  for (let i = 0; i <= seconds; i++) {
    out.push({
      at: start + i,
      lat: 47.37 + i * 0.00008,
      lng: 8.54,
      distance: distanceFrom + i * 8,
      altitude: 400 + 30 * Math.sin(i / 300),
      speed: 8,
      heartRate: 130 + (i % 20),
      cadence: 85,
      power: 200 + (i % 50),
      temperature: 18,
    });
  }
  return out;
}

export type LengthSpec = { seconds: number; idle?: boolean };

/**
 * A pool swim as the devices that time lengths rather than records write it: a LENGTH message
 * per length (start_time, total_elapsed_time, avg_speed; an idle length is a rest at the wall), a
 * LAP per group of lengths and a SESSION with the pool's length. `records`: "untimed" adds one
 * record per length without a timestamp and the lengths without one either (Garmin FR910XT);
 * "none" writes no record, the lengths with their timestamps (Garmin Swim).
 */
export function buildPoolSwim(laps: LengthSpec[][], { poolLength = 25, records = "none" as "none" | "untimed" } = {}): Uint8Array {
  const e = new Encoder();
  e.writeMesg({ mesgNum: Profile.MesgNum.FILE_ID, type: "activity", manufacturer: "garmin", product: 0, timeCreated: FILE_START, serialNumber: 1 } as never);
  let t = 0;
  let distance = 0;
  let index = 0;
  for (const lengths of laps) {
    const lapStart = t;
    let lapDistance = 0;
    for (const l of lengths) {
      const speed = l.idle ? undefined : poolLength / l.seconds;
      e.writeMesg({
        mesgNum: Profile.MesgNum.LENGTH,
        messageIndex: index++,
        ...(records === "none" ? { timestamp: at(t + l.seconds) } : {}),
        startTime: at(t),
        totalElapsedTime: l.seconds,
        totalTimerTime: l.seconds,
        lengthType: l.idle ? "idle" : "active",
        ...(speed !== undefined ? { avgSpeed: speed } : {}),
      } as never);
      if (!l.idle) lapDistance += poolLength;
      if (records === "untimed") e.writeMesg({ mesgNum: Profile.MesgNum.RECORD, distance: distance + lapDistance, ...(speed !== undefined ? { speed } : {}) } as never);
      t += l.seconds;
    }
    distance += lapDistance;
    e.writeMesg({ mesgNum: Profile.MesgNum.LAP, timestamp: at(t), startTime: at(lapStart), totalElapsedTime: t - lapStart, totalTimerTime: t - lapStart, totalDistance: lapDistance } as never);
  }
  e.writeMesg({
    mesgNum: Profile.MesgNum.SESSION,
    timestamp: at(t),
    startTime: at(0),
    totalElapsedTime: t,
    totalTimerTime: t,
    totalDistance: distance,
    sport: "swimming",
    subSport: "lapSwimming",
    poolLength,
    poolLengthUnit: "metric",
    firstLapIndex: 0,
    numLaps: laps.length,
  } as never);
  return e.close();
}

/**
 * A two-leg ride whose second leg states no speeds: its average is its 4,800 m over 600 s, 8 m/s,
 * above the 7.5 m/s its records' speed reaches (a wheel sensor beside a GPS distance); its two
 * laps likewise. Its records' distances run on from the first leg's (from 5,000 m).
 */
export function rideWithLegFasterThanItsMaximum(): Uint8Array {
  return buildFit([
    { sport: "cycling", start: 0, elapsed: 600, distance: 4800, records: rideRecords(0, 600) },
    {
      sport: "cycling",
      start: 660,
      elapsed: 600,
      distance: 4800,
      records: rideRecords(660, 600, { distanceFrom: 5000 }).map((r) => ({ ...r, speed: 7.5 })),
      laps: [
        { start: 660, elapsed: 300, distance: 2400 },
        { start: 960, elapsed: 300, distance: 2400 },
      ],
    },
  ]);
}
