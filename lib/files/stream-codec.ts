import { crc32 } from "node:zlib";
import { chooseSamples, RESOLUTIONS, type Channel } from "./downsample";
import { STREAM_KEYS, type StreamKey, type Streams } from "./types";

/*
 * The one `activity_streams.data` value of an activity. Layout (version 1):
 *
 *   u8      version (1)
 *   varint  size: samples per channel
 *   varint  mask: bit i set when STREAM_KEYS[i] is present
 *   per present channel, in STREAM_KEYS order:
 *     u8        0 = every sample has a value, 1 = a presence bitmap of ceil(size/8) bytes follows
 *     [bitmap]  bit (i & 7) of byte (i >> 3) set when sample i has a value
 *     varint    byte length of the values, so a reader wanting other channels skips them
 *     values    for each sample with a value: the quantised integer (value / precision, rounded)
 *               minus the previous one in the channel, zigzag-mapped, as an LEB128 varint;
 *               `latlng` writes latitude then longitude, each with its own previous value
 *   varint  number of stored resolutions, then each: varint max, varint count, the count − 1
 *           gaps (minus one) between the sorted indices sampleIndices(streams, max) chose, and
 *           those samples' channels laid out as above; one for `low` and one for `medium` when
 *           the activity has more samples. Those answers then decode a thousand samples, not
 *           the whole activity, for about 10 % more bytes
 *   u32 LE  CRC-32 of everything before it
 *
 * Why this shape: samples arrive at 1 Hz or so, so consecutive values are close and their
 * differences fit in one or two bytes (time 1000 ms → 2 bytes, a coordinate moving 8 m/s
 * ≈ 700e-7° → 2 bytes, heart rate ±1 bpm → 1 byte). A 4-hour ride encodes to about 1.9 bytes
 * per sample per channel and takes about 1.4 on disk once PostgreSQL's TOAST compression has
 * had its turn (stream-storage.test.ts measures it), far under the 8-byte budget, while
 * decoding stays a single pass with no decompression library. A channel without gaps pays
 * no bitmap. The CRC makes a damaged value an error instead of wrong numbers.
 */

const VERSION = 1;

/** Resolutions whose samples are chosen once, at encoding, so answering them decodes and picks. */
const STORED_RESOLUTIONS = [RESOLUTIONS.low, RESOLUTIONS.medium];

/**
 * Values per unit each channel is kept at: a value is stored as round(value × scale) and read
 * back as that integer ÷ scale, so a decimal scale gives back the shortest decimal (12.34, not
 * 12.340000000000002). Heart rate and cadence are in Hz but devices count whole beats and
 * revolutions per minute (cadence with 1/128 rpm fractions, as FIT's `fractional_cadence`),
 * so their scales are 60 and 60 × 128: 151 bpm is kept as exactly 151/60 Hz.
 */
export const STREAM_SCALE: Readonly<Record<StreamKey, number>> = {
  time_s: 1000,
  latlng: 1e7,
  distance_m: 100,
  altitude_m: 100,
  speed_mps: 1000,
  heart_rate_hz: 60,
  cadence_hz: 60 * 128,
  power_w: 1,
  temperature_c: 10,
};

/**
 * The precision each channel is kept at (also what the API promises): time 0.001 s, latlng
 * 1e-7° (about 1 cm), distance and altitude 0.01 m, speed 0.001 m/s, heart rate 1 bpm (1/60 Hz),
 * cadence 1/128 rpm, power 1 W, temperature 0.1 °C. Values are rounded to it on encode, so
 * decode(encode(x)) is stable: encoding it again gives the same bytes.
 */
export const STREAM_PRECISION: Readonly<Record<StreamKey, number>> = Object.fromEntries(
  STREAM_KEYS.map((k) => [k, 1 / STREAM_SCALE[k]]),
) as Record<StreamKey, number>;

/** The largest quantised magnitude kept: differences and zigzag codes stay exact doubles. */
export const MAX_Q = 2 ** 50;
/** A varint of a zigzagged difference of two values within ±MAX_Q fits in 8 bytes. */
const MAX_VARINT_BYTES = 8;

/**
 * Rounds a value to its channel's precision, as stored. The channel's scale (STREAM_SCALE[key])
 * is passed in, so a loop over a channel's values reads it once.
 */
function quantise(key: StreamKey, scale: number, value: number): number {
  const q = Math.round(value * scale);
  if (!Number.isFinite(q) || Math.abs(q) > MAX_Q) {
    throw new RangeError(`stream ${key}: value ${value} cannot be stored`);
  }
  return q === 0 ? 0 : q; // no -0
}

class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(64, capacity));
  }
  private grow(extra: number) {
    if (this.pos + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + extra));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  byte(b: number) {
    this.grow(1);
    this.buf[this.pos++] = b;
  }
  bytes(b: Uint8Array) {
    this.grow(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** An unsigned integer below 2^53 as LEB128. */
  varint(n: number) {
    this.grow(MAX_VARINT_BYTES + 1);
    const buf = this.buf;
    let pos = this.pos;
    if (n < 2 ** 32) {
      // The usual case, in 32-bit integer arithmetic: the same bytes as the general loop.
      while (n >= 0x80) {
        buf[pos++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
    } else {
      while (n >= 0x80) {
        buf[pos++] = (n % 0x80) | 0x80;
        n = Math.floor(n / 0x80);
      }
    }
    buf[pos++] = n;
    this.pos = pos;
  }
  /** A signed difference, zigzag-mapped so small magnitudes of either sign take one byte. */
  signed(d: number) {
    this.varint(d >= 0 ? d * 2 : -d * 2 - 1);
  }
}

/** Streams as the one `activity_streams.data` value. Values are rounded to STREAM_PRECISION. */
export function encodeStreams(streams: Streams): Uint8Array {
  const qs = quantiseAll(streams);
  const { size } = qs;
  // Chosen on the stored values, so encoding what was decoded chooses the same samples.
  const maxes = STORED_RESOLUTIONS.filter((max) => size > max);
  const chosen = sampleSetsOfQuantised(qs, maxes);
  const sets = maxes.map((max, i) => [max, chosen[i]!] as const);

  let mask = 0;
  STREAM_KEYS.forEach((key, i) => {
    if (qs.channels[key]) mask |= 1 << i;
  });
  const w = new ByteWriter(64 + size * 16);
  w.byte(VERSION);
  w.varint(size);
  w.varint(mask);
  writeChannels(w, qs);
  w.varint(sets.length);
  for (const [max, indices] of sets) {
    w.varint(max);
    w.varint(indices.length);
    for (let j = 1; j < indices.length; j++) w.varint(indices[j]! - indices[j - 1]! - 1);
    writeChannels(w, pick(qs, indices));
  }
  const crc = crc32(w.buf.subarray(0, w.pos));
  w.byte(crc & 0xff);
  w.byte((crc >>> 8) & 0xff);
  w.byte((crc >>> 16) & 0xff);
  w.byte((crc >>> 24) & 0xff);
  return w.buf.slice(0, w.pos);
}

/** Every channel of `qs`: flag, bitmap when there are gaps, byte length, delta varints. */
function writeChannels(w: ByteWriter, qs: QuantisedStreams) {
  const { size } = qs;
  const values = new ByteWriter(size * 4);
  for (const key of STREAM_KEYS) {
    const ch = qs.channels[key];
    if (!ch) continue;
    const { q, lng, present } = ch;
    if (present === null) {
      w.byte(0);
    } else {
      w.byte(1);
      w.bytes(present);
    }
    values.pos = 0;
    let prev = 0;
    let prevLng = 0;
    for (let i = 0; i < size; i++) {
      if (present !== null && (present[i >> 3]! & (1 << (i & 7))) === 0) continue;
      values.signed(q[i]! - prev);
      prev = q[i]!;
      if (lng) {
        values.signed(lng[i]! - prevLng);
        prevLng = lng[i]!;
      }
    }
    w.varint(values.pos);
    w.bytes(values.buf.subarray(0, values.pos));
  }
}

/** The samples at `indices` of every channel. */
function pick(qs: QuantisedStreams, indices: number[]): QuantisedStreams {
  const size = indices.length;
  const channels: QuantisedStreams["channels"] = {};
  for (const key of STREAM_KEYS) {
    const ch = qs.channels[key];
    if (!ch) continue;
    const q = new Float64Array(size);
    const lng = ch.lng ? new Float64Array(size) : undefined;
    let present: Uint8Array | null = null;
    indices.forEach((i, j) => {
      if (ch.present !== null && (ch.present[i >> 3]! & (1 << (i & 7))) === 0) {
        present ??= allPresent(size);
        present[j >> 3]! &= ~(1 << (j & 7));
        return;
      }
      q[j] = ch.q[i]!;
      if (lng) lng[j] = ch.lng![i]!;
    });
    channels[key] = { q, lng, present };
  }
  return { size, channels };
}

/** Checks the shape of `streams` and rounds every value to its channel's precision. */
export function quantiseAll(streams: Streams): QuantisedStreams {
  const size = streams.size;
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`streams: bad size ${size}`);
  if (!Array.isArray(streams.time_s) || streams.time_s.length !== size) {
    throw new RangeError("streams: time_s must have `size` values");
  }
  const channels: QuantisedStreams["channels"] = {};
  for (const key of STREAM_KEYS) {
    const values = streams[key] as readonly (number | [number, number] | null)[] | undefined;
    if (values === undefined) continue;
    if (!Array.isArray(values) || values.length !== size) throw new RangeError(`streams: ${key} must have ${size} entries`);
    const q = new Float64Array(size);
    const lng = key === "latlng" ? new Float64Array(size) : undefined;
    let present: Uint8Array | null = null;
    const scale = STREAM_SCALE[key];
    for (let i = 0; i < size; i++) {
      const v = values[i];
      if (v == null) {
        if (key === "time_s") throw new RangeError("streams: time_s cannot have gaps");
        present ??= allPresent(size);
        present[i >> 3]! &= ~(1 << (i & 7));
      } else if (lng) {
        if (!Array.isArray(v) || v.length !== 2) throw new RangeError("streams: latlng holds [lat, lng] pairs");
        q[i] = quantise(key, scale, v[0]);
        lng[i] = quantise(key, scale, v[1]);
      } else {
        if (typeof v !== "number") throw new RangeError(`streams: ${key} holds numbers`);
        q[i] = quantise(key, scale, v);
      }
    }
    channels[key] = { q, lng, present };
  }
  return { size, channels };
}

function allPresent(size: number): Uint8Array {
  const bitmap = new Uint8Array((size + 7) >> 3).fill(0xff);
  if (size & 7) bitmap[bitmap.length - 1] = (1 << (size & 7)) - 1;
  return bitmap;
}

export function corrupt(why: string): never {
  throw new Error(`stream data is corrupt: ${why}`);
}

class ByteReader {
  pos = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly end: number,
  ) {}
  byte(): number {
    if (this.pos >= this.end) corrupt("truncated");
    return this.buf[this.pos++]!;
  }
  varint(): number {
    const buf = this.buf;
    let n = 0;
    let mul = 1;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      if (this.pos >= this.end) corrupt("truncated");
      const b = buf[this.pos++]!;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 0x80;
    }
    return corrupt("varint too long");
  }
}

/** One decoded channel: integers at STREAM_SCALE, `present` null when every sample has a value. */
export type QuantisedChannel = { q: Float64Array; lng?: Float64Array; present: Uint8Array | null };
export type QuantisedStreams = {
  size: number;
  channels: Partial<Record<StreamKey, QuantisedChannel>>;
};
export type DecodedStreams = QuantisedStreams & {
  /** The activity's sample count (`size` is smaller when `indices` says which samples these are). */
  originalSize: number;
  /** Set when a stored resolution was asked for: which of the activity's samples `channels` hold. */
  indices?: number[];
  /** The samples chosen at encoding for each stored `max` below the activity's size. */
  indexSets: Map<number, number[]>;
  /** With `lazy`, where each requested channel's values lie in the bytes, undecoded. */
  spans: Partial<Record<StreamKey, ChannelSpan>>;
};

/** A channel left encoded: its delta varints are bytes [start, end), for the samples `present` marks. */
export type ChannelSpan = { start: number; end: number; present: Uint8Array | null };

/**
 * The stored integers themselves, without turning them into decimals: what the streams
 * answer formats from. `keys` limits which channels are decoded (the others are skipped by
 * their stored length). With `resolution` (a max of RESOLUTIONS) that was stored, only the
 * chosen samples are decoded and `indices` names them. Throws on any damage (bad version,
 * CRC, lengths, trailing bytes); every allocation is bounded by the length of the input.
 */
export function decodeQuantised(
  bytes: Uint8Array,
  keys: readonly StreamKey[] = STREAM_KEYS,
  resolution?: number,
  lazy = false,
): DecodedStreams {
  if (!(bytes instanceof Uint8Array)) corrupt("not bytes");
  if (bytes.length < 1 + 1 + 1 + 4) corrupt("too short");
  const end = bytes.length - 4;
  const stored = (bytes[end]! | (bytes[end + 1]! << 8) | (bytes[end + 2]! << 16) | (bytes[end + 3]! << 24)) >>> 0;
  if (crc32(bytes.subarray(0, end)) !== stored) corrupt("checksum mismatch");
  const r = new ByteReader(bytes, end);
  const version = r.byte();
  if (version !== VERSION) corrupt(`unknown version ${version}`);
  const size = r.varint();
  // time_s has no gaps and every value takes at least one byte.
  if (size > end - r.pos) corrupt("size larger than the data");
  const mask = r.varint();
  if (mask >= 1 << STREAM_KEYS.length || (mask & 1) === 0) corrupt("bad channel mask");
  const wanted = resolution !== undefined && STORED_RESOLUTIONS.includes(resolution as never) && size > resolution;
  const spans: DecodedStreams["spans"] = {};
  let channels = readChannels(bytes, r, size, mask, wanted ? [] : keys, lazy ? spans : null);
  let indices: number[] | undefined;
  const setCount = r.varint();
  if (setCount > STORED_RESOLUTIONS.length) corrupt("too many index sets");
  const indexSets = new Map<number, number[]>();
  for (let s = 0; s < setCount; s++) {
    const max = r.varint();
    const len = r.varint();
    if (len > max || len < 2 || len > size || len - 1 > end - r.pos || indexSets.has(max)) corrupt("bad index set");
    const set = new Array<number>(len);
    set[0] = 0;
    for (let j = 1; j < len; j++) set[j] = set[j - 1]! + r.varint() + 1;
    if (set[len - 1] !== size - 1) corrupt("bad index set");
    indexSets.set(max, set);
    const mine = wanted && max === resolution;
    const picked = readChannels(bytes, r, len, mask, mine ? keys : [], null);
    if (mine) {
      channels = picked;
      indices = set;
    }
  }
  if (r.pos !== end) corrupt("trailing bytes");
  if (wanted && !indices) corrupt("stored resolution missing");
  return { size: indices ? indices.length : size, channels, originalSize: size, indices, indexSets, spans };
}

/**
 * The channels of `mask`, decoding those in `keys` (or, given `spans`, noting where they lie)
 * and skipping the others by their length.
 */
function readChannels(
  bytes: Uint8Array,
  r: ByteReader,
  size: number,
  mask: number,
  keys: readonly StreamKey[],
  spans: DecodedStreams["spans"] | null,
): QuantisedStreams["channels"] {
  const end = r.end;
  const channels: QuantisedStreams["channels"] = {};
  STREAM_KEYS.forEach((key, k) => {
    if ((mask & (1 << k)) === 0) return;
    const flag = r.byte();
    let present: Uint8Array | null = null;
    let count = size;
    if (flag === 1) {
      if (key === "time_s") corrupt("time_s with gaps");
      const len = (size + 7) >> 3;
      if (r.pos + len > end) corrupt("truncated bitmap");
      present = bytes.slice(r.pos, r.pos + len);
      r.pos += len;
      count = 0;
      for (let i = 0; i < size; i++) if (present[i >> 3]! & (1 << (i & 7))) count++;
      if (size & 7 && present[len - 1]! >> (size & 7)) corrupt("bitmap bits past the end");
    } else if (flag !== 0) {
      corrupt("bad channel flag");
    }
    const length = r.varint();
    const valuesEnd = r.pos + length;
    if (valuesEnd > end) corrupt("channel longer than the data");
    if (count * (key === "latlng" ? 2 : 1) > length) corrupt("more values than data");
    if (!keys.includes(key) || spans) {
      if (spans && keys.includes(key)) spans[key] = { start: r.pos, end: valuesEnd, present };
      r.pos = valuesEnd;
      return;
    }
    const q = new Float64Array(size);
    const lng = key === "latlng" ? new Float64Array(size) : undefined;
    r.pos = readValues(bytes, r.pos, valuesEnd, size, present, q, lng);
    if (r.pos !== valuesEnd) corrupt("channel length mismatch");
    channels[key] = { q, lng, present };
  });
  return channels;
}

/*
 * The decoding hot path (every streams request runs it): values are read with a cursor kept in
 * a local, the one-byte varint (most differences) inline, and the zigzag undone with integer
 * operations, which keeps V8 on small integers; longer varints take the bounded general path.
 */
/** Where slowVarint left off. */
let cursor = 0;

/** A varint of two or more bytes (or one at the very end), bounded; sets `cursor` past it. */
function slowVarint(buf: Uint8Array, p: number, end: number): number {
  let z = 0;
  let mul = 1;
  for (let n = 0; n < MAX_VARINT_BYTES; n++) {
    if (p >= end) corrupt("truncated");
    const b = buf[p++]!;
    z += (b & 0x7f) * mul;
    if (b < 0x80) {
      cursor = p;
      return z;
    }
    mul *= 0x80;
  }
  return corrupt("varint too long");
}

export function unzigzag(z: number): number {
  if (z < 0x80000000) return (z & 1) === 0 ? z >>> 1 : -(z >>> 1) - 1;
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

function readValues(
  buf: Uint8Array,
  p: number,
  end: number,
  size: number,
  present: Uint8Array | null,
  out: Float64Array,
  out2: Float64Array | undefined,
): number {
  let prev = 0;
  let prev2 = 0;
  for (let i = 0; i < size; i++) {
    if (present !== null && (present[i >> 3]! & (1 << (i & 7))) === 0) continue;
    let z: number;
    let b = p < end ? buf[p]! : 0x80;
    if (b < 0x80) {
      z = b;
      p++;
    } else if (p + 1 < end && (b = buf[p + 1]!) < 0x80) {
      z = (buf[p]! & 0x7f) | (b << 7);
      p += 2;
    } else {
      z = slowVarint(buf, p, end);
      p = cursor;
    }
    prev += unzigzag(z);
    if (prev > MAX_Q || prev < -MAX_Q) corrupt("value out of range");
    out[i] = prev;
    if (out2 !== undefined) {
      b = p < end ? buf[p]! : 0x80;
      if (b < 0x80) {
        z = b;
        p++;
      } else if (p + 1 < end && (b = buf[p + 1]!) < 0x80) {
        z = (buf[p]! & 0x7f) | (b << 7);
        p += 2;
      } else {
        z = slowVarint(buf, p, end);
        p = cursor;
      }
      prev2 += unzigzag(z);
      if (prev2 > MAX_Q || prev2 < -MAX_Q) corrupt("value out of range");
      out2[i] = prev2;
    }
  }
  return p;
}

/** The inverse of `encodeStreams`: values at STREAM_PRECISION. Throws on damaged bytes. */
export function decodeStreams(bytes: Uint8Array): Streams {
  return quantisedToStreams(decodeQuantised(bytes));
}

export function quantisedToStreams({ size, channels }: QuantisedStreams): Streams {
  const out: Streams = { size, time_s: [] };
  for (const key of STREAM_KEYS) {
    const ch = channels[key];
    if (!ch) continue;
    const scale = STREAM_SCALE[key];
    const { q, lng, present } = ch;
    if (lng) {
      const arr: ([number, number] | null)[] = new Array(size);
      for (let i = 0; i < size; i++) {
        arr[i] = present && !(present[i >> 3]! & (1 << (i & 7))) ? null : [q[i]! / scale, lng[i]! / scale];
      }
      out.latlng = arr;
    } else {
      const arr: (number | null)[] = new Array(size);
      for (let i = 0; i < size; i++) {
        arr[i] = present && !(present[i >> 3]! & (1 << (i & 7))) ? null : q[i]! / scale;
      }
      (out as Record<string, unknown>)[key] = arr;
    }
  }
  return out;
}

/**
 * sampleIndices(quantisedToStreams(qs), max) for each of `maxes`, read straight from the stored
 * integers: the same numbers (each value over its channel's scale), without an array of numbers
 * or a pair per sample in between, and read once for every `max`.
 */
export function sampleSetsOfQuantised(qs: QuantisedStreams, maxes: readonly number[]): number[][] {
  const { size, channels } = qs;
  return chooseSamples(size, maxes, () => {
    const column = (q: Float64Array, scale: number, present: Uint8Array | null) => {
      const y = new Float64Array(size);
      for (let i = 0; i < size; i++) y[i] = present && !(present[i >> 3]! & (1 << (i & 7))) ? Number.NaN : q[i]! / scale;
      return y;
    };
    const out: Channel[] = [];
    let time: Float64Array = new Float64Array(0);
    for (const key of STREAM_KEYS) {
      const ch = channels[key];
      if (!ch) continue;
      const scale = STREAM_SCALE[key];
      if (key === "time_s") time = column(ch.q, scale, null);
      else {
        out.push({ key, values: column(ch.q, scale, ch.present) });
        if (ch.lng) out.push({ key, values: column(ch.lng, scale, ch.present) });
      }
    }
    return { time, channels: out };
  });
}
