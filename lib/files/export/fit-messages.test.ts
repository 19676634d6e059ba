import { CrcCalculator, Encoder, Profile } from "@garmin/fitsdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { syntheticActivity } from "../synthetic";
import { decodeFitStrictly } from "../testing/decode-fit";
import { exportFit } from "./fit";
import { ByteSink, enumValue, EVENT_FIELDS, MesgWriter, RECORD_FIELDS, type RecordField } from "./fit-messages";

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
});
