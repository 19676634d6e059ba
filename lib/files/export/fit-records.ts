import { Profile } from "@garmin/fitsdk";

/*
 * FIT record messages, the one message an activity file holds thousands of, written straight
 * into bytes. @garmin/fitsdk's Encoder builds a message definition for every message it is given
 * and, for each field of it, searches the message's whole profile (84 fields for a record): 50 µs
 * a record, 0.7 s for a 4-hour ride at 1 Hz and about 100 s for the 2,000,000 samples a file may
 * hold (lib/files/sanity.ts), past the file worker's 60 s. Here the fields are looked up in the
 * same profile once per file, and each record is its values, encoded as the Encoder encodes
 * them: the profile's scale and offset, rounded, written little-endian by a DataView. The rest of
 * the file (file_id, events, laps, session, activity) still goes through the Encoder
 * (./fit.ts).
 *
 * One definition for all of a file's records, on local message 15, which the Encoder's runs
 * before and between the records (three messages, and a pause's two events) never reach; a value the sample lacks is the field's invalid
 * value, which readers take as absent (the Encoder would instead have defined the message again
 * without the field).
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

const RECORD_MESG = 20;
export const RECORD_LOCAL_MESG = 15;

/** FIT's base types the record fields use: their code (with the endian flag of multi-byte ones), size and invalid value. */
const BASE_TYPES = {
  sint8: { code: 0x01, size: 1, invalid: 0x7f, set: (v: DataView, at: number, x: number) => v.setInt8(at, x) },
  uint8: { code: 0x02, size: 1, invalid: 0xff, set: (v: DataView, at: number, x: number) => v.setUint8(at, x) },
  sint16: { code: 0x83, size: 2, invalid: 0x7fff, set: (v: DataView, at: number, x: number) => v.setInt16(at, x, true) },
  uint16: { code: 0x84, size: 2, invalid: 0xffff, set: (v: DataView, at: number, x: number) => v.setUint16(at, x, true) },
  sint32: { code: 0x85, size: 4, invalid: 0x7fffffff, set: (v: DataView, at: number, x: number) => v.setInt32(at, x, true) },
  uint32: { code: 0x86, size: 4, invalid: 0xffffffff, set: (v: DataView, at: number, x: number) => v.setUint32(at, x, true) },
} as const;

type ProfileField = { num: number; name: string; baseType: string; scale: number | number[]; offset: number | number[]; components: unknown[] };

type Column = {
  num: number;
  base: (typeof BASE_TYPES)[keyof typeof BASE_TYPES];
  /** Stored = round((value + offset) × scale) when the field has either; the value as it is when not. */
  scale: number;
  offset: number;
  scaled: boolean;
};

const profileFields = Object.values((Profile.messages as unknown as Record<number, { fields: Record<number, ProfileField> }>)[RECORD_MESG]!.fields);

/** A field's column as the Encoder reads the profile (mesg-definition.js): a component's scale is the field's own unless there are several. */
function column(name: RecordField): Column {
  const field = profileFields.find((f) => f.name === name);
  if (!field) throw new Error(`the FIT profile has no record field ${name}`);
  const base = BASE_TYPES[field.baseType as keyof typeof BASE_TYPES];
  if (!base) throw new Error(`record field ${name} has base type ${field.baseType}, which the export does not write`);
  const several = field.components.length > 1;
  const first = (v: number | number[] | undefined, fallback: number) => (several ? fallback : ((Array.isArray(v) ? v[0] : v) ?? fallback));
  const scale = first(field.scale, 1);
  const offset = first(field.offset, 0);
  return { num: field.num, base, scale, offset, scaled: scale !== 1 || offset !== 0 };
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

/** A file's record messages, with the fields it carries, written to `sink`. */
export class RecordWriter {
  readonly #columns: Column[];
  readonly #size: number;

  constructor(
    private readonly sink: ByteSink,
    readonly fields: readonly RecordField[],
  ) {
    this.#columns = fields.map(column);
    this.#size = 1 + this.#columns.reduce((n, c) => n + c.base.size, 0);
  }

  /** The definition message; written once, before the first record. */
  writeDefinition(): void {
    const n = this.#columns.length;
    const view = this.sink.reserve(6 + 3 * n);
    let at = this.sink.length;
    view.setUint8(at++, 0x40 | RECORD_LOCAL_MESG);
    view.setUint8(at++, 0); // reserved
    view.setUint8(at++, 0); // little-endian
    view.setUint16(at, RECORD_MESG, true);
    at += 2;
    view.setUint8(at++, n);
    for (const c of this.#columns) {
      view.setUint8(at++, c.num);
      view.setUint8(at++, c.base.size);
      view.setUint8(at++, c.base.code);
    }
    this.sink.length = at;
  }

  /** One record: `values` in the order of `fields`, null for what the sample lacks. */
  write(values: ArrayLike<number | null>): void {
    const view = this.sink.reserve(this.#size);
    let at = this.sink.length;
    view.setUint8(at++, RECORD_LOCAL_MESG);
    const columns = this.#columns;
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!;
      const v = values[i];
      const stored = v == null || !Number.isFinite(v) ? c.base.invalid : c.scaled ? Math.round((v + c.offset) * c.scale) : v;
      c.base.set(view, at, stored);
      at += c.base.size;
    }
    this.sink.length = at;
  }
}
