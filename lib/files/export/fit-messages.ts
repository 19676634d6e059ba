import { Profile } from "@garmin/fitsdk";

/*
 * FIT messages written straight into bytes: the records, which an activity file holds
 * thousands of, and the timer events around its pauses. @garmin/fitsdk's Encoder builds a
 * message definition for every message it is given and, for each field of it, searches the
 * message's whole profile (84 fields for a record): 50 µs a record, 0.7 s for a 4-hour ride at
 * 1 Hz and about 100 s for the 2,000,000 samples a file may hold (lib/files/sanity.ts), past the
 * file worker's 60 s. Here a message's fields are looked up in the same profile once per file,
 * and each message is its values, encoded as the Encoder encodes them: the profile's scale and
 * offset, rounded, written little-endian by a DataView; an enum by the number the profile gives
 * its name. The rest of the file (file_id, device_info, laps, session, activity) still goes
 * through the Encoder (./fit.ts).
 *
 * One definition per kind of message for the whole file, on a local message number of its own
 * (records 15, events 14), defined after the Encoder's run before them (whose definitions it
 * replaces); a value a message lacks is the field's invalid value, which readers take as absent
 * (the Encoder would instead have defined the message again without the field).
 *
 * What a native field cannot hold at the precision the service keeps (altitude in 0.2 m steps,
 * temperature in whole °C, a lap's or session's heart rate in whole bpm, power in whole watts,
 * energy in whole kcal) is written beside it, exactly, in a developer field of this service's
 * own application (SERVICE_DEVELOPER_FIELDS): its description names the native field it refines
 * (native_mesg_num and native_field_num, FIT's way to say "this is that field"), in that field's
 * units. Other tools read the native fields as before; the service's importer
 * (lib/files/fit/parse-fit.ts) prefers the developer field, for this application id only.
 *
 * A record's timestamp is whole seconds: where a sample falls within a second (a GPX or TCX
 * upload's, at 5.503 s), the record carries the whole second it falls in as its timestamp and,
 * in the developer field timestamp_ms, the milliseconds after it (as FIT's own timestamp_ms fields
 * of other messages do). That field refines no native field by replacing it, so its description
 * names none; the importer adds it to the timestamp, for this application id only. Samples that
 * share a whole second then each have a record of their own, in time order.
 *
 * An average speed above the maximum is one the service derived from distance and time (an
 * activity's average is not held to its maximum: the distance may be a GPS's or corrected, the
 * maximum a wheel sensor's). Stated as enhanced_avg_speed it would read as a file contradicting
 * itself, whose maximum the importer drops; it is written instead in the developer field
 * derived_avg_speed, which names no native field, and the importer keeps both.
 */

/** The record fields the export writes, in the order they are written. */
export const RECORD_FIELDS = [
  "timestamp",
  "positionLat",
  "positionLong",
  "distance",
  "enhancedAltitude",
  "altitude",
  "enhancedSpeed",
  "speed",
  "heartRate",
  "cadence",
  "fractionalCadence",
  "power",
  "temperature",
] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];

/** The timer event fields the export writes. */
export const EVENT_FIELDS = ["timestamp", "event", "eventType", "eventGroup"] as const;

const MESG = { record: 20, event: 21 } as const;
/** The local message numbers of the kinds written here. */
const LOCAL_MESG = { record: 15, event: 14 } as const;

/** FIT's base types of the fields written here: their code (with the endian flag of multi-byte ones), size and invalid value. */
const BASE_TYPES = {
  enum: { code: 0x00, size: 1, invalid: 0xff, set: (v: DataView, at: number, x: number) => v.setUint8(at, x) },
  sint8: { code: 0x01, size: 1, invalid: 0x7f, set: (v: DataView, at: number, x: number) => v.setInt8(at, x) },
  uint8: { code: 0x02, size: 1, invalid: 0xff, set: (v: DataView, at: number, x: number) => v.setUint8(at, x) },
  sint16: { code: 0x83, size: 2, invalid: 0x7fff, set: (v: DataView, at: number, x: number) => v.setInt16(at, x, true) },
  uint16: { code: 0x84, size: 2, invalid: 0xffff, set: (v: DataView, at: number, x: number) => v.setUint16(at, x, true) },
  sint32: { code: 0x85, size: 4, invalid: 0x7fffffff, set: (v: DataView, at: number, x: number) => v.setInt32(at, x, true) },
  uint32: { code: 0x86, size: 4, invalid: 0xffffffff, set: (v: DataView, at: number, x: number) => v.setUint32(at, x, true) },
} as const;

/** A base type a developer field of the service is written in: the integer ones above, and float64 (written by the Encoder only, for energy). */
type DeveloperBaseType = "sint16" | "uint16" | "sint32" | "uint32" | "float64";
const DEVELOPER_BASE_TYPE_CODE: Record<DeveloperBaseType, number> = { sint16: 0x83, uint16: 0x84, sint32: 0x85, uint32: 0x86, float64: 0x89 };

type ProfileField = { num: number; name: string; baseType: string; scale: number | number[]; offset: number | number[]; components: unknown[] };

type Column = {
  name: string;
  num: number;
  base: (typeof BASE_TYPES)[keyof typeof BASE_TYPES];
  /** Stored = round((value + offset) × scale) when the field has either; the value as it is when not. */
  scale: number;
  offset: number;
  scaled: boolean;
};

const profileFields = (mesgNum: number) =>
  Object.values((Profile.messages as unknown as Record<number, { fields: Record<number, ProfileField> }>)[mesgNum]!.fields);

/** A field's column as the Encoder reads the profile (mesg-definition.js): a component's scale is the field's own unless there are several. */
function column(fields: ProfileField[], name: string): Column {
  const field = fields.find((f) => f.name === name);
  if (!field) throw new Error(`the FIT profile has no field ${name} in this message`);
  const base = BASE_TYPES[field.baseType as keyof typeof BASE_TYPES];
  if (!base) throw new Error(`field ${name} has base type ${field.baseType}, which the export does not write`);
  const several = field.components.length > 1;
  const first = (v: number | number[] | undefined, fallback: number) => (several ? fallback : ((Array.isArray(v) ? v[0] : v) ?? fallback));
  const scale = first(field.scale, 1);
  const offset = first(field.offset, 0);
  return { name, num: field.num, base, scale, offset, scaled: scale !== 1 || offset !== 0 };
}

/**
 * This service's FIT application id (developer_data_id.application_id): the UUID
 * 3d2cc9e8-6f02-48f6-b9c4-885f439ceacc as 16 bytes. Its developer fields are the service's own
 * exact values; the importer prefers them to the native fields they refine.
 */
export const SERVICE_APPLICATION_ID: readonly number[] = Object.freeze([
  0x3d, 0x2c, 0xc9, 0xe8, 0x6f, 0x02, 0x48, 0xf6, 0xb9, 0xc4, 0x88, 0x5f, 0x43, 0x9c, 0xea, 0xcc,
]);
/** The developer_data_index the export gives the service's application: the only developer in its files. */
const SERVICE_DEVELOPER_DATA_INDEX = 0;

/** Whether a decoded developer_data_id's application_id is this service's. */
export function isServiceApplicationId(applicationId: unknown): boolean {
  return (
    Array.isArray(applicationId) &&
    applicationId.length === SERVICE_APPLICATION_ID.length &&
    SERVICE_APPLICATION_ID.every((b, i) => applicationId[i] === b)
  );
}

/** One developer field of the service: the native field it refines, and how it holds the value. */
export type DeveloperField = {
  /** field_definition_number, and the Encoder's key for it. */
  readonly num: number;
  readonly mesgNum: number;
  /** The native field it stands for, as fitsdk names it; null for one that stands for none (timestamp_ms). */
  readonly native: string | null;
  readonly nativeNum: number | null;
  /** field_name (the native field's FIT name) and units (the native field's). */
  readonly fieldName: string;
  readonly units: string;
  readonly baseType: DeveloperBaseType;
  /** Stored = round(value × scale) (float64: the value itself); read back as stored ÷ scale. */
  readonly scale: number;
};

function developerField(num: number, kind: "record" | "lap" | "session", native: string, baseType: DeveloperBaseType, scale: number): DeveloperField {
  const mesgNum = { record: 20, lap: 19, session: 18 }[kind];
  const field = profileFields(mesgNum).find((f) => f.name === native);
  if (!field) throw new Error(`the FIT profile has no field ${native} in ${kind}`);
  const units = (field as { units?: string | string[] }).units;
  return {
    num,
    mesgNum,
    native,
    nativeNum: field.num,
    fieldName: native.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    units: (Array.isArray(units) ? units[0] : units) ?? "",
    baseType,
    scale,
  };
}

/** The developer field of a record's milliseconds after its whole-second timestamp (0–999). */
const recordTimestampMs = (num: number): DeveloperField => ({
  num,
  mesgNum: 20,
  native: null,
  nativeNum: null,
  fieldName: "timestamp_ms",
  units: "ms",
  baseType: "uint16",
  scale: 1,
});

/**
 * The developer field of an average speed the service derived (distance over time), which is
 * above the maximum speed (lib/files/sanity.ts `merge`): written in its place, so no reader takes
 * it for a measured average that contradicts its maximum. It refines no native field by
 * replacing it, so its description names none; the importer takes it as the average the
 * activity had, not held to the maximum, for this application id only. A float64 of m/s, the
 * value as it is (a description's scale is one byte: 1000, for enhanced_avg_speed's 1 mm/s,
 * cannot be said).
 */
const derivedAvgSpeed = (num: number, kind: "lap" | "session"): DeveloperField => ({
  num,
  mesgNum: { lap: 19, session: 18 }[kind],
  native: null,
  nativeNum: null,
  fieldName: "derived_avg_speed",
  units: "m/s",
  baseType: "float64",
  scale: 1,
});

/**
 * The developer fields the export writes, each only where the activity has the value. Each
 * holds the precision the service keeps (README, lib/db/schema/measure.ts) in the native
 * field's units: altitude to 1 cm and temperature to 0.1 °C (STREAM_SCALE); a heart rate
 * total to 0.0001 Hz, 0.006 bpm, which 1/250 bpm holds (FIT's scale is one byte: 1/1000 bpm
 * cannot be said; 1/250 bpm errs at most 0.002 bpm, 0.00003 Hz, under half the 0.0001 Hz
 * kept); power to 0.1 W; energy to 1 J, which no byte-sized scale of kcal holds (1 kcal is
 * 4,184 J), so a float64 of kcal; a sample's time to 1 ms (time_s), in timestamp_ms; an
 * average speed derived above the maximum as it is, in derived_avg_speed.
 */
export const SERVICE_DEVELOPER_FIELDS = {
  recordAltitude: developerField(0, "record", "enhancedAltitude", "sint32", 100),
  recordTemperature: developerField(1, "record", "temperature", "sint16", 10),
  sessionAvgHeartRate: developerField(2, "session", "avgHeartRate", "uint32", 250),
  sessionMaxHeartRate: developerField(3, "session", "maxHeartRate", "uint32", 250),
  sessionAvgPower: developerField(4, "session", "avgPower", "uint32", 10),
  sessionTotalCalories: developerField(5, "session", "totalCalories", "float64", 1),
  lapAvgHeartRate: developerField(6, "lap", "avgHeartRate", "uint32", 250),
  lapMaxHeartRate: developerField(7, "lap", "maxHeartRate", "uint32", 250),
  lapAvgPower: developerField(8, "lap", "avgPower", "uint32", 10),
  recordTimestampMs: recordTimestampMs(9),
  sessionDerivedAvgSpeed: derivedAvgSpeed(10, "session"),
  lapDerivedAvgSpeed: derivedAvgSpeed(11, "lap"),
} as const satisfies Record<string, DeveloperField>;

/** The service's developer_data_id message. */
export const SERVICE_DEVELOPER_DATA_ID_MESG = Object.freeze({
  mesgNum: 207,
  developerDataIndex: SERVICE_DEVELOPER_DATA_INDEX,
  applicationId: [...SERVICE_APPLICATION_ID],
  applicationVersion: 1,
});

/** The field_description message of one of the service's developer fields. */
export function fieldDescriptionMesg(f: DeveloperField) {
  return {
    mesgNum: 206,
    developerDataIndex: SERVICE_DEVELOPER_DATA_INDEX,
    fieldDefinitionNumber: f.num,
    fitBaseTypeId: DEVELOPER_BASE_TYPE_CODE[f.baseType],
    fieldName: f.fieldName,
    scale: f.scale,
    offset: 0,
    units: f.units,
    ...(f.nativeNum === null ? {} : { nativeMesgNum: f.mesgNum, nativeFieldNum: f.nativeNum }),
  };
}

/** The Encoder's `fieldDescriptions` option for `fields`: each keyed by its field number, as `developerFields` name them. */
export function encoderFieldDescriptions(fields: readonly DeveloperField[]) {
  return Object.fromEntries(fields.map((f) => [f.num, { developerDataIdMesg: SERVICE_DEVELOPER_DATA_ID_MESG, fieldDescriptionMesg: fieldDescriptionMesg(f) }]));
}

const DEVELOPER_RANGE: Record<DeveloperBaseType, [number, number]> = {
  sint16: [-0x8000, 0x7ffe],
  uint16: [0, 0xfffe],
  sint32: [-0x80000000, 0x7ffffffe],
  uint32: [0, 0xfffffffe],
  float64: [-Number.MAX_VALUE, Number.MAX_VALUE],
};

/** What a developer field stores for `value` (as the Encoder writes it, unscaled), or null where there is none or its type cannot hold it. */
export function developerValue(f: DeveloperField, value: number | null | undefined): number | null {
  if (value == null || !Number.isFinite(value)) return null;
  const stored = f.baseType === "float64" ? value : Math.round(value * f.scale);
  const [lo, hi] = DEVELOPER_RANGE[f.baseType];
  return stored >= lo && stored <= hi ? stored : null;
}

/** The number FIT's profile gives a name of one of its types (`enumValue("event", "timer")` is 0). */
export function enumValue(type: string, name: string): number {
  const names = (Profile.types as unknown as Record<string, Record<string, string>>)[type];
  const found = names && Object.entries(names).find(([, n]) => n === name);
  if (!found) throw new Error(`the FIT profile has no ${type} named ${name}`);
  return Number(found[0]);
}

/** Bytes appended in order to a buffer that grows as needed. */
export class ByteSink {
  #bytes = new Uint8Array(64 * 1024);
  #view = new DataView(this.#bytes.buffer);
  length = 0;

  /** Room for `n` more bytes; the view to write them through. */
  reserve(n: number): DataView {
    if (this.length + n > this.#bytes.byteLength) {
      const grown = new Uint8Array(Math.max(this.#bytes.byteLength * 2, this.length + n));
      grown.set(this.#bytes.subarray(0, this.length));
      this.#bytes = grown;
      this.#view = new DataView(grown.buffer);
    }
    return this.#view;
  }

  append(bytes: Uint8Array): void {
    this.reserve(bytes.byteLength);
    this.#bytes.set(bytes, this.length);
    this.length += bytes.byteLength;
  }

  get bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.length);
  }
}

/**
 * One kind of message (records or timer events) with the fields a file carries, written to
 * `sink`: its definition once, before the first message, then each message's values. Developer
 * fields of the service (`developer`, integer types only) follow the native ones, named in
 * `values` by their key in SERVICE_DEVELOPER_FIELDS.
 */
export class MesgWriter<F extends string, D extends string = never> {
  readonly #columns: Column[];
  readonly #developer: { name: string; f: DeveloperField; base: (typeof BASE_TYPES)[keyof typeof BASE_TYPES] }[];
  readonly #size: number;
  readonly #mesgNum: number;
  readonly #local: number;
  #defined = false;

  constructor(
    private readonly sink: ByteSink,
    kind: keyof typeof MESG,
    fields: readonly F[],
    developer: Readonly<Partial<Record<D, DeveloperField>>> = {} as Partial<Record<D, DeveloperField>>,
  ) {
    this.#mesgNum = MESG[kind];
    this.#local = LOCAL_MESG[kind];
    const profile = profileFields(this.#mesgNum);
    this.#columns = fields.map((f) => column(profile, f));
    this.#developer = Object.entries(developer as Record<string, DeveloperField>).map(([name, f]) => {
      if (f.mesgNum !== this.#mesgNum || f.baseType === "float64") throw new Error(`developer field ${f.fieldName} is not written in a ${kind}`);
      return { name, f, base: BASE_TYPES[f.baseType] };
    });
    this.#size = 1 + [...this.#columns, ...this.#developer].reduce((n, c) => n + c.base.size, 0);
  }

  #writeDefinition(): void {
    const n = this.#columns.length;
    const d = this.#developer.length;
    const view = this.sink.reserve(6 + 3 * n + (d ? 1 + 3 * d : 0));
    let at = this.sink.length;
    view.setUint8(at++, 0x40 | (d ? 0x20 : 0) | this.#local);
    view.setUint8(at++, 0); // reserved
    view.setUint8(at++, 0); // little-endian
    view.setUint16(at, this.#mesgNum, true);
    at += 2;
    view.setUint8(at++, n);
    for (const c of this.#columns) {
      view.setUint8(at++, c.num);
      view.setUint8(at++, c.base.size);
      view.setUint8(at++, c.base.code);
    }
    if (d) {
      view.setUint8(at++, d);
      for (const c of this.#developer) {
        view.setUint8(at++, c.f.num);
        view.setUint8(at++, c.base.size);
        view.setUint8(at++, SERVICE_DEVELOPER_DATA_INDEX);
      }
    }
    this.sink.length = at;
    this.#defined = true;
  }

  /** One message: each of `fields` (and developer fields) from `values`, by name; null or missing for what it lacks. */
  write(values: Readonly<Partial<Record<F | D, number | null>>>): void {
    if (!this.#defined) this.#writeDefinition();
    const view = this.sink.reserve(this.#size);
    let at = this.sink.length;
    view.setUint8(at++, this.#local);
    for (const c of this.#columns) {
      const v = values[c.name as F];
      const stored = v == null || !Number.isFinite(v) ? c.base.invalid : c.scaled ? Math.round((v + c.offset) * c.scale) : v;
      c.base.set(view, at, stored);
      at += c.base.size;
    }
    for (const c of this.#developer) {
      const stored = developerValue(c.f, values[c.name as D]);
      c.base.set(view, at, stored ?? c.base.invalid);
      at += c.base.size;
    }
    this.sink.length = at;
  }
}
