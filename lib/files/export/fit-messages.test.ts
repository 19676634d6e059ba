import { CrcCalculator, Encoder, Profile } from "@garmin/fitsdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { syntheticActivity } from "../synthetic";
import { decodeFitStrictly } from "../testing/decode-fit";
import { exportFit } from "./fit";
import {
  ByteSink,
  developerValue,
  encoderFieldDescriptions,
  enumValue,
  EVENT_FIELDS,
  fieldDescriptionMesg,
  MesgWriter,
  RECORD_FIELDS,
  SERVICE_APPLICATION_ID,
  SERVICE_DEVELOPER_DATA_ID_MESG,
  SERVICE_DEVELOPER_FIELDS,
  type RecordField,
} from "./fit-messages";

/*
 * The records and timer events ./fit-messages.ts writes must read back, with fitsdk's own
 * Decoder, exactly as the messages fitsdk's Encoder writes from the same values: same fields,
 * same scaled values, same absences, in the same order. Each case writes one file both ways
 * after the same opening message.
 */

const M = Profile.MesgNum as Record<string, number>;
type Row = Partial<Record<RecordField, number | null>>;
type TimerEvent = { timestamp: number; eventType: "start" | "stop" | "stopAll" };
/** A record, or a timer event between records. */
type Item = Row | TimerEvent;
const isEvent = (i: Item): i is TimerEvent => "eventType" in i;

const decode = decodeFitStrictly;

const fileId = { mesgNum: M.FILE_ID!, type: "activity", manufacturer: "development", product: 0, serialNumber: 1, timeCreated: 1_000_000_000 };

/** The items through fitsdk's Encoder, a value left out where it is null (as the export did before). */
function byEncoder(items: Item[]): Uint8Array {
  const e = new Encoder();
  e.writeMesg(fileId as never);
  for (const item of items) {
    if (isEvent(item)) {
      e.writeMesg({ mesgNum: M.EVENT!, timestamp: item.timestamp, event: "timer", eventType: item.eventType, eventGroup: 0 } as never);
      continue;
    }
    const mesg: Record<string, unknown> = { mesgNum: M.RECORD! };
    for (const [k, v] of Object.entries(item)) if (v != null) mesg[k] = v;
    e.writeMesg(mesg as never);
  }
  return e.close();
}

/** The same items through MesgWriter, joined to the Encoder's opening as exportFit joins them. */
function byWriter(items: Item[], fields: readonly RecordField[]): Uint8Array {
  const opening = new Encoder().writeMesg(fileId as never).close();
  const sink = new ByteSink();
  sink.append(opening.subarray(0, opening.byteLength - 2));
  const records = new MesgWriter(sink, "record", fields);
  const events = new MesgWriter(sink, "event", EVENT_FIELDS);
  for (const item of items) {
    if (isEvent(item)) events.write({ timestamp: item.timestamp, event: enumValue("event", "timer"), eventType: enumValue("eventType", item.eventType), eventGroup: 0 });
    else records.write(item);
  }
  return closedFile(sink);
}

/** The file in `sink` (its 14-byte header first) with the header's data size and both CRCs made for its bytes. */
function closedFile(sink: ByteSink): Uint8Array {
  const view = sink.reserve(2);
  view.setUint32(4, sink.length - 14, true);
  view.setUint16(12, CrcCalculator.calculateCRC(sink.bytes, 0, 12), true);
  view.setUint16(sink.length, CrcCalculator.calculateCRC(sink.bytes, 0, sink.length), true);
  sink.length += 2;
  return sink.bytes.slice();
}

function sameMessages(items: Item[], fields: readonly RecordField[] = RECORD_FIELDS): void {
  const ours = decode(byWriter(items, fields));
  const theirs = decode(byEncoder(items));
  expect(ours.recordMesgs).toEqual(theirs.recordMesgs);
  expect(ours.eventMesgs).toEqual(theirs.eventMesgs);
}

/** Whole-number fields (the export rounds them before writing) and the ranges the export lets through. */
const value: Record<RecordField, fc.Arbitrary<number | null>> = {
  timestamp: fc.integer({ min: 900_000_000, max: 1_400_000_000 }),
  positionLat: fc.option(fc.integer({ min: -(2 ** 30), max: 2 ** 30 })),
  positionLong: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 })),
  distance: fc.option(fc.double({ min: 0, max: 42_949_672, noNaN: true })),
  enhancedAltitude: fc.option(fc.double({ min: -500, max: 12_000, noNaN: true })),
  altitude: fc.option(fc.double({ min: -500, max: 12_000, noNaN: true })),
  enhancedSpeed: fc.option(fc.double({ min: 0, max: 4_294_967, noNaN: true })),
  speed: fc.option(fc.double({ min: 0, max: 65.534, noNaN: true })),
  heartRate: fc.option(fc.integer({ min: 0, max: 254 })),
  cadence: fc.option(fc.integer({ min: 0, max: 254 })),
  fractionalCadence: fc.option(fc.integer({ min: 0, max: 127 }).map((n) => n / 128)),
  power: fc.option(fc.integer({ min: 0, max: 65_534 })),
  temperature: fc.option(fc.integer({ min: -127, max: 127 })),
};

const timerEvent: fc.Arbitrary<TimerEvent> = fc.record({
  timestamp: fc.integer({ min: 900_000_000, max: 1_400_000_000 }),
  eventType: fc.constantFrom("start" as const, "stop" as const, "stopAll" as const),
});

describe("FIT records and timer events written directly", () => {
  it("read back as the Encoder's records and timer events of the same values, whatever the values, gaps and order", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof({ arbitrary: fc.record(value), weight: 9 }, { arbitrary: timerEvent, weight: 1 }), { minLength: 1, maxLength: 40 }), (items) => {
        sameMessages(items);
      }),
      { numRuns: 200 },
    );
  });

  it("read back the same at the ends of every range the export lets through", () => {
    const low: Row = { timestamp: 1, positionLat: -(2 ** 30), positionLong: -(2 ** 31), distance: 0, enhancedAltitude: -500, altitude: -500, enhancedSpeed: 0, speed: 0, heartRate: 0, cadence: 0, fractionalCadence: 0, power: 0, temperature: -127 };
    const high: Row = { timestamp: 2 ** 32 - 2, positionLat: 2 ** 30, positionLong: 2 ** 31, distance: 42_949_672, enhancedAltitude: 12_000, altitude: 12_000, enhancedSpeed: 4_294_967, speed: 65.534, heartRate: 254, cadence: 254, fractionalCadence: 127 / 128, power: 65_534, temperature: 127 };
    sameMessages([low, { timestamp: 3, eventType: "stop" }, { timestamp: 4, eventType: "start" }, high, { timestamp: 5 }, { timestamp: 6, eventType: "stopAll" }]);
  });

  it("write only the fields a file carries", () => {
    const fields: RecordField[] = ["timestamp", "heartRate", "power"];
    const rows: Row[] = [{ timestamp: 10, heartRate: 120, power: 200 }, { timestamp: 11, heartRate: null, power: 210 }];
    sameMessages(rows, fields);
    const records = decode(byWriter(rows, fields)).recordMesgs!;
    expect(Object.keys(records[0]!).sort()).toEqual(["heartRate", "power", "timestamp"]);
  });
});

describe("the service's developer fields in records, written directly", () => {
  const DEV = SERVICE_DEVELOPER_FIELDS;
  const recordDeveloperFields = [DEV.recordAltitude, DEV.recordTemperature];
  type DevRow = { timestamp: number; enhancedAltitude: number | null; recordAltitude: number | null; recordTemperature: number | null };
  const opening = () => [fileId, SERVICE_DEVELOPER_DATA_ID_MESG, ...recordDeveloperFields.map(fieldDescriptionMesg)];

  /** The rows through fitsdk's Encoder, its developer fields from the same descriptions. */
  function devByEncoder(rows: DevRow[]): Uint8Array {
    const e = new Encoder({ fieldDescriptions: encoderFieldDescriptions(recordDeveloperFields) } as never);
    for (const m of opening()) e.writeMesg(m as never);
    for (const r of rows) {
      const developerFields: Record<number, number> = {};
      const alt = developerValue(DEV.recordAltitude, r.recordAltitude);
      const temp = developerValue(DEV.recordTemperature, r.recordTemperature);
      if (alt !== null) developerFields[DEV.recordAltitude.num] = alt;
      if (temp !== null) developerFields[DEV.recordTemperature.num] = temp;
      e.writeMesg({ mesgNum: M.RECORD!, timestamp: r.timestamp, ...(r.enhancedAltitude === null ? {} : { enhancedAltitude: r.enhancedAltitude }), developerFields } as never);
    }
    return e.close();
  }

  /** The same rows through MesgWriter, after the Encoder's opening (as exportFit writes them). */
  function devByWriter(rows: DevRow[]): Uint8Array {
    const e = new Encoder();
    for (const m of opening()) e.writeMesg(m as never);
    const head = e.close();
    const sink = new ByteSink();
    sink.append(head.subarray(0, head.byteLength - 2));
    const records = new MesgWriter(sink, "record", ["timestamp", "enhancedAltitude"] as const, { recordAltitude: DEV.recordAltitude, recordTemperature: DEV.recordTemperature });
    for (const r of rows) records.write(r);
    return closedFile(sink);
  }

  it("read back as the Encoder's developer fields of the same values, whatever the values", () => {
    const row = fc.record({
      timestamp: fc.integer({ min: 900_000_000, max: 1_400_000_000 }),
      enhancedAltitude: fc.option(fc.integer({ min: -2_500, max: 60_000 }).map((n) => n / 5)),
      recordAltitude: fc.option(fc.integer({ min: -50_000, max: 1_200_000 }).map((n) => n / 100)),
      recordTemperature: fc.option(fc.integer({ min: -600, max: 700 }).map((n) => n / 10)),
    });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 30 }), (rows) => {
        const ours = decode(devByWriter(rows));
        expect(ours.recordMesgs).toEqual(decode(devByEncoder(rows)).recordMesgs);
        // fitsdk gives developer values unscaled: the stored centimetres and tenths of a degree.
        rows.forEach((r, i) => {
          const dev = (ours.recordMesgs![i] as { developerFields?: Record<number, number> }).developerFields ?? {};
          expect(dev[0]).toBe(r.recordAltitude === null ? undefined : Math.round(r.recordAltitude * 100));
          expect(dev[1]).toBe(r.recordTemperature === null ? undefined : Math.round(r.recordTemperature * 10));
        });
      }),
      { numRuns: 100 },
    );
  });

  it("write a value their type cannot hold as absent", () => {
    const rows: DevRow[] = [{ timestamp: 10, enhancedAltitude: 0, recordAltitude: 3e7, recordTemperature: 4000 }];
    const [record] = decode(devByWriter(rows)).recordMesgs!;
    expect((record as { developerFields?: unknown }).developerFields).toBeUndefined();
  });
});

describe("exportFit", () => {
  it("joins the Encoder's messages and the records into one file fitsdk reads whole, pauses in their place", () => {
    const a = syntheticActivity({ hours: 1, seed: 4, sport: "ride" });
    const m = decode(exportFit(a));
    expect(m.recordMesgs!.length).toBeGreaterThan(3000);
    expect(m.fileIdMesgs).toHaveLength(1);
    expect(m.sessionMesgs).toHaveLength(1);
    expect(m.activityMesgs).toHaveLength(1);
    // The timer's events in time order, each pause's stop at the last record before it and its
    // start at the first after it.
    const events = m.eventMesgs!.map((e) => ({ type: e.eventType, t: (e.timestamp as Date).getTime() }));
    expect(events[0]!.type).toBe("start");
    expect(events.at(-1)!.type).toBe("stopAll");
    const times = m.recordMesgs!.map((r) => (r.timestamp as Date).getTime());
    for (const e of events.slice(1, -1)) expect(times).toContain(e.t);
  });

  it("the activity message carries the end on the athlete's wall clock (local_timestamp), as devices write it", () => {
    const a = syntheticActivity({ hours: 0.1, seed: 6, sport: "run" });
    const m = decode(exportFit({ ...a, utcOffsetS: 9 * 3600 }));
    const activity = m.activityMesgs![0]! as { timestamp: Date; localTimestamp?: number };
    // local_timestamp is seconds since FIT's epoch (1989-12-31T00:00:00) on the local clock.
    const FIT_EPOCH_S = Date.UTC(1989, 11, 31) / 1000;
    expect(activity.localTimestamp).toBe(activity.timestamp.getTime() / 1000 - FIT_EPOCH_S + 9 * 3600);
    expect((decode(exportFit(a)).activityMesgs![0] as { localTimestamp?: number }).localTimestamp).toBeUndefined();
  });

  it("writes the service's exact values in developer fields beside the native fields, which keep what they held", () => {
    const base = syntheticActivity({ hours: 0.2, seed: 5, sport: "ride" });
    const a = {
      ...base,
      streams: { ...base.streams, altitude_m: base.streams.altitude_m!.map(() => 101.5), temperature_c: base.streams.temperature_c!.map(() => 21.3) },
      totals: { ...base.totals, averageHeartRateHz: 2.4444, maxHeartRateHz: 3.0167, averagePowerW: 203.4, energyJ: 626_569 },
      laps: [],
    };
    const bytes = exportFit(a);
    // Garmin's own Decoder finds the file whole: header, both CRCs, no error.
    const m = decode(bytes) as Record<string, Record<string, unknown>[]>;
    expect(m.developerDataIdMesgs).toEqual([{ developerDataIndex: 0, applicationId: [...SERVICE_APPLICATION_ID], applicationVersion: 1 }]);
    // Each description names the native field it refines, in that field's units.
    const described = m.fieldDescriptionMesgs!.map((d) => [d.fieldName, d.nativeMesgNum, d.nativeFieldNum, d.units, d.scale, d.fitBaseTypeId]);
    expect(described).toEqual([
      ["enhanced_altitude", 20, 78, "m", 100, 0x85],
      ["temperature", 20, 13, "C", 10, 0x83],
      ["avg_heart_rate", 18, 16, "bpm", 250, 0x86],
      ["max_heart_rate", 18, 17, "bpm", 250, 0x86],
      ["avg_power", 18, 20, "watts", 10, 0x86],
      ["total_calories", 18, 11, "kcal", 1, 0x89],
      ["avg_heart_rate", 19, 15, "bpm", 250, 0x86],
      ["max_heart_rate", 19, 16, "bpm", 250, 0x86],
      ["avg_power", 19, 19, "watts", 10, 0x86],
    ]);
    // A reader that ignores developer fields sees the native values it saw before: 0.2 m steps,
    // whole °C, whole bpm, whole watts, whole kcal.
    const record = m.recordMesgs![0]!;
    expect(record.enhancedAltitude).toBeCloseTo(101.6, 9);
    expect(record.altitude).toBeCloseTo(101.6, 9);
    expect(record.temperature).toBe(21);
    expect(record.developerFields).toEqual({ 0: 10_150, 1: 213 });
    const session = m.sessionMesgs![0]!;
    expect([session.avgHeartRate, session.maxHeartRate, session.avgPower, session.totalCalories]).toEqual([147, 181, 203, 150]);
    expect(session.developerFields).toEqual({ 2: Math.round(2.4444 * 60 * 250), 3: Math.round(3.0167 * 60 * 250), 4: 2034, 5: 626_569 / 4184 });
    // The lap that covers the activity (it has no laps of its own) carries the same.
    expect(m.lapMesgs![0]!.developerFields).toEqual({ 6: Math.round(2.4444 * 60 * 250), 7: Math.round(3.0167 * 60 * 250), 8: 2034 });
  });

  it("describes only the developer fields the activity has values for", () => {
    const base = syntheticActivity({ hours: 0.1, seed: 6, sport: "run" });
    const { altitude_m: _a, temperature_c: _t, ...streams } = base.streams;
    const a = { ...base, streams: { ...streams, size: base.streams.size }, totals: { ...base.totals, averagePowerW: null, energyJ: null }, laps: base.laps.map((l) => ({ ...l, averagePowerW: null })) };
    const m = decode(exportFit(a)) as Record<string, Record<string, unknown>[]>;
    expect(m.fieldDescriptionMesgs!.map((d) => [d.nativeMesgNum, d.fieldName])).toEqual([
      [18, "avg_heart_rate"],
      [18, "max_heart_rate"],
      [19, "avg_heart_rate"],
      [19, "max_heart_rate"],
    ]);
    expect(m.recordMesgs!.some((r) => r.developerFields !== undefined)).toBe(false);
  });
});
