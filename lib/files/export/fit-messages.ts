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
 * (records 15, events 14), which the Encoder's run before them (three messages) never reaches;
 * a value a message lacks is the field's invalid value, which readers take as absent (the
 * Encoder would instead have defined the message again without the field).
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
 * `sink`: its definition once, before the first message, then each message's values.
 */
export class MesgWriter<F extends string> {
  readonly #columns: Column[];
  readonly #size: number;
  readonly #mesgNum: number;
  readonly #local: number;
  #defined = false;

  constructor(
    private readonly sink: ByteSink,
    kind: keyof typeof MESG,
    fields: readonly F[],
  ) {
    this.#mesgNum = MESG[kind];
    this.#local = LOCAL_MESG[kind];
    const profile = profileFields(this.#mesgNum);
    this.#columns = fields.map((f) => column(profile, f));
    this.#size = 1 + this.#columns.reduce((n, c) => n + c.base.size, 0);
  }

  #writeDefinition(): void {
    const n = this.#columns.length;
    const view = this.sink.reserve(6 + 3 * n);
    let at = this.sink.length;
    view.setUint8(at++, 0x40 | this.#local);
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
    this.sink.length = at;
    this.#defined = true;
  }

  /** One message: each of `fields` from `values`, by name; null or missing for what it lacks. */
  write(values: Readonly<Partial<Record<F, number | null>>>): void {
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
    this.sink.length = at;
  }
}
