import { CrcCalculator, Profile } from "@garmin/fitsdk";
import { FileError } from "../types";

// The framing of a FIT file, checked before the SDK decodes it, so a damaged file fails with a
// message that says what is wrong and where: the header (size, ".FIT", its CRC), the declared
// data size against the bytes present (truncation), the file CRC, and the record structure
// (every data message has a definition, no record runs past the data). Bytes after the last
// complete FIT file are ignored: some devices and copy tools pad or append to a finished file.
//
// fitsdk does not decode compressed-timestamp records (it stops with "compressed timestamp
// messages are not currently supported"), though devices write them (compressed-speed-distance.fit).
// Such a file is rewritten here into the equivalent file with full timestamps: each compressed
// record becomes a normal one whose definition carries a timestamp field (253), its value the
// one the FIT protocol defines (the last full timestamp plus the 5-bit rollover offset).

const FIT_EPOCH_S = 631_065_600;
const MAX_CHAINED_FILES = 100;
/**
 * Data messages one upload's FIT files may hold together: about nine days of records at one a
 * second. fitsdk's decoder keeps every message as an object, about 1 KB each: 750,000 took 6 s
 * and 0.9 GB, near the file worker's heap limit. So a file past this fails at once, while it is
 * framed, instead of holding the worker until it runs out of memory (a 25 MiB file of two-byte
 * records is 13 million messages, from 115 KB gzipped).
 */
export const MAX_FIT_MESSAGES = 800_000;
const TIMESTAMP_FIELD = 253;
const UINT32 = 0x86;

const fmt = (n: number) => n.toLocaleString("en-US");

type Definition = {
  /** The definition record's bytes, to be written again after an augmented one. */
  raw: Uint8Array;
  littleEndian: boolean;
  globalBytes: Uint8Array;
  fieldDefs: Uint8Array;
  devDefs: Uint8Array | null;
  fieldsSize: number;
  size: number;
  /** Byte offset of a 4-byte timestamp field (253) in the message body, or -1. */
  timestampAt: number;
};

/** One FIT file of the input, as the decoder is to read it. */
export type FramedFile = {
  /** The file's bytes, rewritten where it used compressed timestamps or fields the decoder throws on. */
  bytes: Uint8Array;
  /**
   * Whether the reader needs fitsdk to expand components: a record defines
   * compressed_speed_distance (its speed and distance exist only as components), or the file
   * holds heart rate messages (merging them into records needs their expanded timestamps). The
   * other components of the messages read (speed → enhanced_speed, altitude →
   * enhanced_altitude, a lap's and session's averages) copy a field the reader takes as it is.
   */
  needsComponents: boolean;
};

/**
 * Each FIT file of the input: a file may chain several, one after another, and each is a file of
 * its own (its own definitions, developer fields and file type), so each is decoded and read
 * alone, together with the chained files after it that continue it (those without a file_id).
 */
export type Framed = {
  files: FramedFile[];
  /** Bytes ignored after the last complete FIT file. */
  trailing: number;
  /**
   * Why those bytes were not read, when they open as a FIT file (a header of its own) that is
   * damaged or cut short: another recording lost with them, not junk a copy tool appended.
   */
  damagedAfter?: FileError;
};

const RECORD_MESG = 20;
const HR_MESG = 132;
const COMPRESSED_SPEED_DISTANCE_FIELD = 8;

/** A message's fields as fitsdk's profile defines them (none for a message it does not know). */
export const profileFields = (globalNum: number) => (Profile.messages[globalNum] as (typeof Profile.messages)[number] | undefined)?.fields ?? {};

/**
 * fitsdk's decoder (21.217) throws "Cannot read properties of undefined (reading '0')" on a
 * message whose definition lists a field with components before the accumulated field they
 * target: reading the accumulated field, it looks for the other's scale and offset on the value
 * it decoded instead of in the profile. Devices write such messages (a Garmin triathlon file's
 * records carry cycles, then total_cycles). These are the profile's pairs for a message (the
 * field with components, then the accumulated field), read from the profile once per message:
 * today record's compressed_speed_distance → distance, cycles → total_cycles and
 * compressed_accumulated_power → accumulated_power, and hr's event_timestamp_12 → event_timestamp.
 */
const decoderThrowingPairs = (() => {
  const known = new Map<number, [components: number, accumulated: number][]>();
  return (globalNum: number) => {
    let pairs = known.get(globalNum);
    if (!pairs) {
      const fields = profileFields(globalNum);
      const found = new Set<string>();
      for (const [num, field] of Object.entries(fields)) {
        for (const target of field.components ?? []) if (fields[Number(target)]?.isAccumulated) found.add(`${num} ${target}`);
      }
      pairs = [...found].map((pair) => pair.split(" ").map(Number) as [number, number]);
      known.set(globalNum, pairs);
    }
    return pairs;
  };
})();

/** A field number the message's profile does not define: the decoder reads past such a field. */
function undefinedFieldOf(globalNum: number, fieldDefs: Uint8Array): number {
  const profiled = profileFields(globalNum);
  for (let n = 200; n < 253; n++) {
    let used = n in profiled;
    for (let i = 0; i < fieldDefs.length && !used; i += 3) used = fieldDefs[i] === n;
    if (!used) return n;
  }
  throw damaged("The FIT file is damaged: a message definition uses every field number.");
}

/**
 * The definition's field list with each accumulated field that follows its components' field
 * renamed to a field number the profile does not define, or null when none does. The decoder then
 * reads past it: its value is what the components give (expanded where the reader needs them).
 */
function withoutThrowingFields(globalNum: number, fieldDefs: Uint8Array): Uint8Array | null {
  const pairs = decoderThrowingPairs(globalNum);
  let out: Uint8Array | null = null;
  for (const [components, accumulated] of pairs) {
    const list = out ?? fieldDefs;
    let seenComponents = false;
    for (let i = 0; i < list.length; i += 3) {
      if (list[i] === components) seenComponents = true;
      else if (list[i] === accumulated && seenComponents) {
        out ??= fieldDefs.slice();
        out[i] = undefinedFieldOf(globalNum, out);
      }
    }
  }
  return out;
}

/** Whether a definition (global number, field definitions) is one `needsComponents` names. */
function definesComponents(globalNum: number, fieldDefs: Uint8Array): boolean {
  if (globalNum === HR_MESG) return true;
  if (globalNum !== RECORD_MESG) return false;
  for (let i = 0; i < fieldDefs.length; i += 3) if (fieldDefs[i] === COMPRESSED_SPEED_DISTANCE_FIELD) return true;
  return false;
}

function damaged(message: string): FileError {
  return new FileError("invalid_file", message);
}

/** Checks and, where needed, rewrites a FIT file for the SDK's decoder. Throws `invalid_file`. */
export function frameFit(b: Uint8Array): Framed {
  const count = { messages: 0 };
  const first = frameOne(b, 0, count);
  const files = [first];
  let p = first.end;
  let damagedAfter: FileError | undefined;
  while (p < b.length && files.length < MAX_CHAINED_FILES) {
    // After a complete file, whatever follows is read only if it is a complete FIT file too:
    // a good file must not fail for what a device or a copy tool appended to it.
    if (!looksLikeHeader(b, p)) break;
    try {
      const next = frameOne(b, p, count);
      files.push(next);
      p = next.end;
    } catch (e) {
      // Past the upload's count of messages is no damage to read around: the upload fails.
      if (!(e instanceof FileError) || count.messages > MAX_FIT_MESSAGES) throw e;
      damagedAfter = e;
      break;
    }
  }
  // A chained file that opens without a file_id message is no file of its own but the rest of
  // the one before: Garmin writes a swim's heart rate, stored by the strap under water, as such
  // files of hr messages after the activity, to be merged into its records. It is decoded with it.
  const groups: FramedFile[] = [];
  let group: (typeof files)[number][] = [];
  const close = () => {
    if (group.length === 0) return;
    let bytes = group[0]!.bytes;
    if (group.length > 1) {
      const joined = new Chunks();
      for (const f of group) joined.push(f.bytes);
      bytes = joined.join();
    }
    groups.push({ bytes, needsComponents: group.some((f) => f.needsComponents) });
    group = [];
  };
  for (const f of files) {
    if (f.opensWithFileId) close();
    group.push(f);
  }
  close();
  return { files: groups, trailing: b.length - p, ...(damagedAfter ? { damagedAfter } : {}) };
}

/** Whether the data at `p` opens with the definition of a file_id message (global number 0), as a FIT file of its own must. */
function opensWithFileId(b: Uint8Array, p: number, end: number): boolean {
  const h = b[p];
  if (h === undefined || h & 0x80 || !(h & 0x40) || p + 5 > end) return false;
  const bigEndian = b[p + 2] === 1;
  const globalNum = bigEndian ? (b[p + 3]! << 8) | b[p + 4]! : b[p + 3]! | (b[p + 4]! << 8);
  return globalNum === 0;
}

/** Checks the FIT file that starts at `p`; throws `invalid_file` saying what is wrong. */
function frameOne(b: Uint8Array, p: number, count: { messages: number }): FramedFile & { end: number; opensWithFileId: boolean } {
  const headerSize = b[p]!;
  if (headerSize !== 12 && headerSize !== 14) {
    throw damaged(`The FIT file's header is damaged: it gives its own size as ${headerSize} bytes, where a FIT header has 12 or 14.`);
  }
  if (b.length - p < headerSize) {
    throw damaged(`The FIT file ends after ${fmt(b.length - p)} bytes, inside its ${headerSize}-byte header: it was cut off while copying.`);
  }
  if (!(b[p + 8] === 0x2e && b[p + 9] === 0x46 && b[p + 10] === 0x49 && b[p + 11] === 0x54)) {
    throw damaged("The FIT file's header is damaged: it lacks the \".FIT\" mark.");
  }
  if (headerSize === 14) {
    const headerCrc = b[p + 12]! | (b[p + 13]! << 8);
    if (headerCrc !== 0 && headerCrc !== CrcCalculator.calculateCRC(b, p, p + 12)) {
      throw damaged("The FIT file's header is damaged: its checksum does not match the header.");
    }
  }
  const dataSize = (b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16)) + b[p + 7]! * 0x1000000;
  if (dataSize === 0) {
    throw damaged("The FIT file declares no data: the recording was never finished or the header is damaged.");
  }
  const dataStart = p + headerSize;
  const dataEnd = dataStart + dataSize;
  const present = b.length - dataStart;
  if (present < dataSize) {
    throw damaged(`The FIT file ends after ${fmt(Math.max(0, present))} of its ${fmt(dataSize)} data bytes: it was cut off (a copy that did not finish, or a recording that stopped abruptly).`);
  }
  if (b.length < dataEnd + 2) {
    throw damaged("The FIT file ends before its final checksum: it was cut off (a copy that did not finish, or a recording that stopped abruptly).");
  }
  countMessages(b, dataStart, dataEnd, count);
  const crc = b[dataEnd]! | (b[dataEnd + 1]! << 8);
  if (crc !== CrcCalculator.calculateCRC(b, p, dataEnd)) {
    throw damaged("The FIT file's checksum does not match its contents: it was damaged in storage or while copying.");
  }
  const { data, needsComponents } = walk(b, dataStart, dataEnd);
  return {
    bytes: data ? withHeader(b, p, data) : b.subarray(p, dataEnd + 2),
    needsComponents,
    end: dataEnd + 2,
    opensWithFileId: opensWithFileId(b, dataStart, dataEnd),
  };
}

/**
 * Adds the data messages of one data section to `count`, and fails the file as soon as the
 * upload's count passes MAX_FIT_MESSAGES: a pass that only reads headers and definitions' sizes,
 * before anything is copied or checksummed. It stops, without a word, where the structure
 * breaks: `walk` says what is wrong there.
 */
function countMessages(b: Uint8Array, p: number, end: number, count: { messages: number }): void {
  const sizes: number[] = new Array(16).fill(-1);
  while (p < end) {
    const h = b[p]!;
    if (h & 0x80 || !(h & 0x40)) {
      const size = sizes[h & 0x80 ? (h >> 5) & 0x3 : h & 0x0f]!;
      if (size < 0) return;
      if (++count.messages > MAX_FIT_MESSAGES) {
        throw new FileError("invalid_file", `The FIT file holds more than ${fmt(MAX_FIT_MESSAGES)} messages, more than this service reads from one upload (about nine days of one-second records).`);
      }
      p += 1 + size;
    } else {
      if (p + 6 > end) return;
      const nFields = b[p + 5]!;
      let size = 0;
      let q = p + 6;
      if (q + nFields * 3 > end) return;
      for (let i = 0; i < nFields; i++) size += b[q + i * 3 + 1]!;
      q += nFields * 3;
      if (h & 0x20) {
        if (q >= end) return;
        const nDev = b[q]!;
        if (q + 1 + nDev * 3 > end) return;
        for (let i = 0; i < nDev; i++) size += b[q + 1 + i * 3 + 1]!;
        q += 1 + nDev * 3;
      }
      sizes[h & 0x0f] = size;
      p = q;
    }
  }
}

/** Whether bytes at `p` begin another chained FIT file rather than trailing garbage. */
function looksLikeHeader(b: Uint8Array, p: number): boolean {
  const size = b[p];
  if (size !== 12 && size !== 14) return false;
  if (b.length - p < size) return false;
  if (!(b[p + 8] === 0x2e && b[p + 9] === 0x46 && b[p + 10] === 0x49 && b[p + 11] === 0x54)) return false;
  if (size === 14) {
    const headerCrc = b[p + 12]! | (b[p + 13]! << 8);
    if (headerCrc !== 0 && headerCrc !== CrcCalculator.calculateCRC(b, p, p + 12)) return false;
  }
  return true;
}

/** A rewritten data section as a complete FIT file: a 14-byte header, the data, a CRC. */
function withHeader(b: Uint8Array, p: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(14 + data.length + 2);
  out[0] = 14;
  out[1] = b[p + 1]!;
  out[2] = b[p + 2]!;
  out[3] = b[p + 3]!;
  new DataView(out.buffer).setUint32(4, data.length, true);
  out.set([0x2e, 0x46, 0x49, 0x54], 8);
  const headerCrc = CrcCalculator.calculateCRC(out, 0, 12);
  out[12] = headerCrc & 0xff;
  out[13] = headerCrc >> 8;
  out.set(data, 14);
  const crc = CrcCalculator.calculateCRC(out, 0, 14 + data.length);
  out[14 + data.length] = crc & 0xff;
  out[15 + data.length] = crc >> 8;
  return out;
}

/**
 * Walks the records of one data section. Returns `data` null when the section can go to the
 * decoder as it is, or the rewritten section when it holds compressed-timestamp records; and
 * whether a definition asks for components (`Framed.needsComponents`).
 */
function walk(b: Uint8Array, start: number, end: number): { data: Uint8Array | null; needsComponents: boolean } {
  const defs: (Definition | undefined)[] = new Array(16);
  const augmented: boolean[] = new Array(16).fill(false);
  let out: Chunks | null = null;
  let lastTs: number | null = null;
  let needsComponents = false;
  let p = start;
  const need = (n: number, what: string) => {
    if (p + n > end) {
      throw damaged(`The FIT file is damaged at byte ${fmt(p)}: ${what} runs past the end of its data.`);
    }
  };
  while (p < end) {
    const h = b[p]!;
    if (h & 0x80) {
      const local = (h >> 5) & 0x3;
      const def = defs[local];
      if (!def) throw damaged(`The FIT file is damaged at byte ${fmt(p)}: a record refers to a message type it never defined.`);
      need(1 + def.size, "a record");
      if (lastTs === null) {
        throw damaged(`The FIT file is damaged at byte ${fmt(p)}: a record's time is given relative to a time the file never stated.`);
      }
      const offset = h & 0x1f;
      let ts: number = (lastTs & ~0x1f) >>> 0;
      ts += offset >= (lastTs & 0x1f) ? offset : offset + 0x20;
      lastTs = ts;
      out ??= Chunks.upTo(b, start, p);
      const body = b.subarray(p + 1, p + 1 + def.size);
      if (def.timestampAt >= 0) {
        if (augmented[local]) {
          out.push(def.raw);
          augmented[local] = false;
        }
        const copy = body.slice();
        writeU32(copy, def.timestampAt, ts, def.littleEndian);
        out.push(Uint8Array.of(local));
        out.push(copy);
      } else {
        if (!augmented[local]) {
          out.push(augmentedDefinition(local, def));
          augmented[local] = true;
        }
        const ts4 = new Uint8Array(4);
        writeU32(ts4, 0, ts, def.littleEndian);
        out.push(Uint8Array.of(local));
        out.push(body.subarray(0, def.fieldsSize));
        out.push(ts4);
        out.push(body.subarray(def.fieldsSize));
      }
      p += 1 + def.size;
    } else if (h & 0x40) {
      const local = h & 0x0f;
      const defStart = p;
      need(6, "a message definition");
      const littleEndian = b[p + 2] === 0;
      const globalBytes = b.subarray(p + 3, p + 5);
      const nFields = b[p + 5]!;
      p += 6;
      need(nFields * 3, "a message definition");
      let fieldDefs = b.subarray(p, p + nFields * 3);
      let fieldsSize = 0;
      let timestampAt = -1;
      for (let i = 0; i < nFields; i++) {
        const num = b[p + i * 3]!;
        const size = b[p + i * 3 + 1]!;
        if (num === TIMESTAMP_FIELD && size === 4 && timestampAt < 0) timestampAt = fieldsSize;
        fieldsSize += size;
      }
      p += nFields * 3;
      let devDefs: Uint8Array | null = null;
      let devSize = 0;
      if (h & 0x20) {
        need(1, "a message definition");
        const nDev = b[p]!;
        need(1 + nDev * 3, "a message definition");
        devDefs = b.subarray(p, p + 1 + nDev * 3);
        for (let i = 0; i < nDev; i++) devSize += b[p + 1 + i * 3 + 1]!;
        p += 1 + nDev * 3;
      }
      let raw = b.subarray(defStart, p);
      const globalNum = littleEndian ? globalBytes[0]! | (globalBytes[1]! << 8) : (globalBytes[0]! << 8) | globalBytes[1]!;
      needsComponents ||= definesComponents(globalNum, fieldDefs);
      const renamed = withoutThrowingFields(globalNum, fieldDefs);
      if (renamed) {
        out ??= Chunks.upTo(b, start, defStart);
        raw = raw.slice();
        raw.set(renamed, 6);
        fieldDefs = raw.subarray(6, 6 + nFields * 3);
      }
      defs[local] = { raw, littleEndian, globalBytes, fieldDefs, devDefs, fieldsSize, size: fieldsSize + devSize, timestampAt };
      augmented[local] = false;
      out?.push(raw);
    } else {
      const local = h & 0x0f;
      const def = defs[local];
      if (!def) throw damaged(`The FIT file is damaged at byte ${fmt(p)}: a record refers to a message type it never defined.`);
      need(1 + def.size, "a record");
      if (def.timestampAt >= 0) lastTs = readU32(b, p + 1 + def.timestampAt, def.littleEndian);
      if (out) {
        if (augmented[local]) {
          out.push(def.raw);
          augmented[local] = false;
        }
        out.push(b.subarray(p, p + 1 + def.size));
      }
      p += 1 + def.size;
    }
  }
  return { data: out ? out.join() : null, needsComponents };
}

function augmentedDefinition(local: number, def: Definition): Uint8Array {
  const nFields = def.fieldDefs.length / 3 + 1;
  if (nFields > 255) throw damaged("The FIT file is damaged: a message definition has too many fields.");
  const head = Uint8Array.of(0x40 | (def.devDefs ? 0x20 : 0) | local, 0, def.littleEndian ? 0 : 1, def.globalBytes[0]!, def.globalBytes[1]!, nFields);
  const parts = [head, def.fieldDefs, Uint8Array.of(TIMESTAMP_FIELD, 4, UINT32)];
  if (def.devDefs) parts.push(def.devDefs);
  const out = new Uint8Array(parts.reduce((n, x) => n + x.length, 0));
  let o = 0;
  for (const x of parts) {
    out.set(x, o);
    o += x.length;
  }
  return out;
}

function readU32(b: Uint8Array, at: number, littleEndian: boolean): number {
  return littleEndian
    ? (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000
    : (b[at + 3]! | (b[at + 2]! << 8) | (b[at + 1]! << 16)) + b[at]! * 0x1000000;
}

function writeU32(b: Uint8Array, at: number, v: number, littleEndian: boolean) {
  const bytes = [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
  if (!littleEndian) bytes.reverse();
  b.set(bytes, at);
}

/** Output assembled from slices of the input and a few new records. */
class Chunks {
  private parts: Uint8Array[] = [];
  private length = 0;
  static upTo(b: Uint8Array, start: number, p: number) {
    const c = new Chunks();
    c.push(b.subarray(start, p));
    return c;
  }
  push(x: Uint8Array) {
    this.parts.push(x);
    this.length += x.length;
  }
  join(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const x of this.parts) {
      out.set(x, o);
      o += x.length;
    }
    return out;
  }
}

export { FIT_EPOCH_S };
