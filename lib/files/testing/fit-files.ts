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
  /** Seconds after the file's start. */
  start: number;
  elapsed: number;
  timer?: number;
  distance?: number;
  calories?: number;
  avgHeartRate?: number;
  maxHeartRate?: number;
  records: RecordSpec[];
  laps?: { start: number; elapsed: number; distance?: number }[];
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

/** A FIT activity file: sessions in order, each with its records, laps and timer pauses. */
export function buildFit(sessions: SessionSpec[], { withSessions = true } = {}): Uint8Array {
  const e = new Encoder();
  e.writeMesg({ mesgNum: Profile.MesgNum.FILE_ID, type: "activity", manufacturer: "development", product: 0, timeCreated: FILE_START, serialNumber: 1 } as never);
  for (const s of sessions) {
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
        timestamp: at(l.start + l.elapsed),
        startTime: at(l.start),
        totalElapsedTime: l.elapsed,
        totalTimerTime: l.elapsed,
        ...(l.distance !== undefined ? { totalDistance: l.distance } : {}),
      } as never);
    }
    if (withSessions) {
      e.writeMesg({
        mesgNum: Profile.MesgNum.SESSION,
        timestamp: at(s.start + s.elapsed),
        startTime: at(s.start),
        totalElapsedTime: s.elapsed,
        totalTimerTime: s.timer ?? s.elapsed,
        sport: s.sport,
        ...(s.subSport ? { subSport: s.subSport } : {}),
        ...(s.distance !== undefined ? { totalDistance: s.distance } : {}),
        ...(s.calories !== undefined ? { totalCalories: s.calories } : {}),
        ...(s.avgHeartRate !== undefined ? { avgHeartRate: s.avgHeartRate } : {}),
        ...(s.maxHeartRate !== undefined ? { maxHeartRate: s.maxHeartRate } : {}),
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
