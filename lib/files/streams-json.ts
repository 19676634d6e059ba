import { RESOLUTIONS, sampleIndices } from "./downsample";
import {
  corrupt,
  decodeQuantised,
  MAX_Q,
  unzigzag,
  type ChannelSpan,
  quantiseAll,
  sampleSetsOfQuantised,
  STREAM_SCALE,
  type QuantisedChannel,
  type QuantisedStreams,
} from "./stream-codec";
import { STREAM_KEYS, type StreamKey, type Streams } from "./types";

/*
 * The streams answer is the largest thing the API sends (a 4-hour ride at full resolution is
 * about 1.3 MB of JSON), so it is written by hand into one byte buffer, from the stored
 * integers: a decimal channel (scale 10^d) is the integer's digits with a point put in, never
 * a double turned back into text, and heart rate and cadence (scales 60 and 7680) take their
 * text from a small table, since a device gives only a few hundred distinct values.
 * JSON.stringify of the decoded arrays takes several times longer.
 */

export type Resolution = keyof typeof RESOLUTIONS;

type Args = {
  activityId: string;
  resolution: Resolution;
  keys: readonly StreamKey[];
};

/**
 * The exact JSON text of CONTRACT §11's streams answer: {"activity_id","resolution",
 * "original_size","size","streams":{key:[...]}} with keys in STREAM_KEYS order, only the
 * requested `keys` the activity has, values at STREAM_PRECISION, null for missing samples,
 * latlng as [lat,lng]. `indices` (sorted) selects samples; without them a resolution other
 * than `full` picks them with sampleIndices.
 */
export function streamsJson(args: Args & { streams: Streams; indices?: number[] }): string {
  const { streams, resolution } = args;
  const indices = args.indices ?? (resolution === "full" ? undefined : sampleIndices(streams, RESOLUTIONS[resolution]));
  const len = writeAnswer(args, quantiseAll(streams), indices, streams.size);
  return scratch.toString("latin1", 0, len);
}

/**
 * The same answer as UTF-8 bytes (it is ASCII), straight from the stored `activity_streams.data`:
 * decodes only the requested channels, and for `low` and `medium` uses the samples chosen when
 * the value was encoded. This is the fast path for the streams endpoint. The bytes may be
 * shared with later calls (see the cache below): send them, never change them.
 */
export function streamsJsonBytesFromStored(args: Args & StoredIdentity & { data: Uint8Array }): Uint8Array {
  const key = cacheKey(args);
  const hit = recall(key);
  if (hit) return hit;
  const len = fromStored(args);
  const bytes = Uint8Array.prototype.slice.call(scratch, 0, len) as Uint8Array;
  remember(key, bytes);
  return bytes;
}

/**
 * What tells one stored value from another for the cache, read in the same statement as the
 * value (or instead of it): the row version that holds it (PostgreSQL's `xmin`, which every
 * write of the row changes) and its length. Reading these costs nothing of the value itself,
 * where its last bytes (a CRC) meant decompressing the whole TOASTed value: 0.45 ms of
 * PostgreSQL per request for a 4-hour ride, against 0.09 ms.
 */
export type StoredIdentity = { version: string; length: number };

/**
 * The answer `streamsJsonBytesFromStored` gave for the stored value of this identity, if it is
 * still kept: a caller that read only the identity (not the value itself) answers a repeated
 * request without reading the row's bytes.
 */
export function cachedStreamsAnswer(args: Args & StoredIdentity): Uint8Array | undefined {
  return recall(cacheKey(args));
}

function recall(key: string): Uint8Array | undefined {
  const hit = answers.get(key);
  if (hit) {
    // Most recently used last: Map keeps insertion order.
    answers.delete(key);
    answers.set(key, hit);
  }
  return hit;
}

/*
 * Answers are kept for reuse, up to CACHE_BYTES: an activity's streams never change once
 * stored, so the same request (a chart opened again, a client polling) is the same bytes. The
 * key holds the stored value's identity (its row version and length), so a value written again
 * can never be answered from the entry of the one before it.
 */
const CACHE_BYTES = 32 * 1024 * 1024;
const answers = new Map<string, Uint8Array>();
let cachedBytes = 0;

function cacheKey(args: Args & StoredIdentity): string {
  return `${args.activityId}\u0000${args.version}\u0000${args.length}\u0000${args.resolution}\u0000${args.keys.join(",")}`;
}

function remember(key: string, bytes: Uint8Array) {
  if (bytes.length > CACHE_BYTES / 4) return;
  answers.set(key, bytes);
  cachedBytes += bytes.length;
  for (const [k, v] of answers) {
    if (cachedBytes <= CACHE_BYTES) break;
    answers.delete(k);
    cachedBytes -= v.length;
  }
}

/** Empties the answer cache (tests that time the uncached path). */
export function clearStreamsJsonCache() {
  answers.clear();
  cachedBytes = 0;
}

/** The same answer as text, straight from the stored bytes. */
export function streamsJsonFromStored(args: Args & { data: Uint8Array }): string {
  const len = fromStored(args);
  return scratch.toString("latin1", 0, len);
}

function fromStored(args: Args & { data: Uint8Array }): number {
  const { resolution, data, keys } = args;
  const max = RESOLUTIONS[resolution];
  const decoded = decodeQuantised(data, keys, max, true);
  if (decoded.indices) {
    // A stored resolution: the chosen samples are all that was decoded.
    return writeAnswer(args, decoded, undefined, decoded.originalSize);
  }
  if (decoded.size <= max) {
    // Every sample: straight from the stored varints to digits, nothing decoded in between.
    return writeAnswer(args, decoded, undefined, decoded.size, (key, span) => writeSpan(key, data, span, decoded.size));
  }
  // Not stored (`high`): choose from every channel, as encoding would have.
  const all = decodeQuantised(data);
  return writeAnswer(args, all, sampleSetsOfQuantised(all, [max])[0], all.size);
}

// One buffer reused by every call: the answer is built synchronously, then copied out.
let scratch = Buffer.allocUnsafe(1 << 20);
let pos = 0;

function ensure(extra: number) {
  if (pos + extra <= scratch.length) return;
  let n = scratch.length * 2;
  while (n < pos + extra) n *= 2;
  const next = Buffer.allocUnsafe(n);
  scratch.copy(next, 0, 0, pos);
  scratch = next;
}

function ascii(s: string) {
  ensure(s.length);
  for (let i = 0; i < s.length; i++) scratch[pos++] = s.charCodeAt(i);
}

/** A JSON string: JSON.stringify escapes, then UTF-8 (ids are ASCII, but nothing relies on it). */
function jsonString(s: string) {
  const b = Buffer.from(JSON.stringify(s), "utf8");
  ensure(b.length);
  b.copy(scratch, pos);
  pos += b.length;
}

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000];

function digitCount(n: number): number {
  if (n < 100000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : 5;
  let digits = 6;
  for (let t = 1000000; t <= n && digits < 17; t *= 10) digits++;
  return digits;
}

// The writers below take the buffer and position as arguments and return the new position:
// kept in locals, the inner loop does no module-variable loads or stores.

/** Digits of a non-negative integer below 2^53. */
function writeUint(buf: Uint8Array, p: number, n: number): number {
  const end = p + digitCount(n);
  p = end;
  if (n < 2147483648) {
    let m = n | 0;
    do {
      const d = (m / 10) | 0;
      buf[--p] = 48 + m - d * 10;
      m = d;
    } while (m > 0);
  } else {
    let m = n;
    do {
      const d = Math.floor(m / 10);
      buf[--p] = 48 + m - d * 10;
      m = d;
    } while (m > 0);
  }
  return end;
}

/** The integer q / 10^decimals as the shortest decimal (what JSON.parse reads back as q / 10^decimals). */
function writeDecimal(buf: Uint8Array, p: number, q: number, decimals: number): number {
  if (q < 0) {
    buf[p++] = 45; // '-'
    q = -q;
  }
  if (decimals === 0) return writeUint(buf, p, q);
  const unit = POW10[decimals]!;
  const whole = q < 2147483648 ? (q / unit) | 0 : Math.floor(q / unit);
  let frac = q - whole * unit; // below 10^7: small-integer arithmetic from here
  p = writeUint(buf, p, whole);
  if (frac === 0) return p;
  let d = decimals;
  while (frac % 10 === 0) {
    frac = (frac / 10) | 0;
    d--;
  }
  buf[p++] = 46; // '.'
  const end = p + d;
  p = end;
  while (d-- > 0) {
    const n = (frac / 10) | 0;
    buf[--p] = 48 + frac - n * 10;
    frac = n;
  }
  return end;
}

/** Text of q / scale for scales that are not powers of ten, cached per (scale, q). */
const tables = new Map<number, Map<number, Uint8Array>>();
function ratioTable(scale: number): Map<number, Uint8Array> {
  let table = tables.get(scale);
  if (!table) tables.set(scale, (table = new Map()));
  return table;
}
function writeRatio(buf: Uint8Array, p: number, table: Map<number, Uint8Array>, q: number, scale: number): number {
  let text = table.get(q);
  if (!text) {
    text = Buffer.from(String(q / scale), "latin1");
    // Devices give few distinct values; a bound keeps a hostile file from growing the cache.
    if (table.size < 100_000) table.set(q, text);
  }
  for (let k = 0; k < text.length; k++) buf[p++] = text[k]!;
  return p;
}

function decimalsOf(scale: number): number {
  const d = Math.round(Math.log10(scale));
  return POW10[d] === scale ? d : -1;
}

// Room for the longest value: sign, 16 digits, point, 7 decimals, comma; twice for latlng.
const MAX_VALUE_BYTES = 32;

function writeChannel(key: StreamKey, ch: QuantisedChannel, size: number, indices: number[] | undefined) {
  const { q, lng, present } = ch;
  const scale = STREAM_SCALE[key];
  const decimals = decimalsOf(scale);
  const table = decimals < 0 ? ratioTable(scale) : null;
  const n = indices ? indices.length : size;
  ensure(n * (lng ? 2 * MAX_VALUE_BYTES + 4 : MAX_VALUE_BYTES) + 8);
  const buf = scratch;
  let p = pos;
  buf[p++] = 91; // '['
  for (let j = 0; j < n; j++) {
    const i = indices ? indices[j]! : j;
    if (j > 0) buf[p++] = 44; // ','
    if (present !== null && (present[i >> 3]! & (1 << (i & 7))) === 0) {
      buf[p++] = 110; // null
      buf[p++] = 117;
      buf[p++] = 108;
      buf[p++] = 108;
    } else if (lng) {
      buf[p++] = 91;
      p = writeDecimal(buf, p, q[i]!, decimals);
      buf[p++] = 44;
      p = writeDecimal(buf, p, lng[i]!, decimals);
      buf[p++] = 93;
    } else if (table === null) {
      p = writeDecimal(buf, p, q[i]!, decimals);
    } else {
      p = writeRatio(buf, p, table, q[i]!, scale);
    }
  }
  buf[p++] = 93; // ']'
  pos = p;
}

/**
 * The answer for `data`'s samples (those at `indices` when given) of an activity of
 * `originalSize` samples; with `fromSpan`, channels come from `data.spans` instead.
 */
// Imported bindings are read through getters in bundled and test builds: the hot loop reads a local copy.
const LIMIT = MAX_Q;

/** Where longVarint left off. */
let varintEnd = 0;

/** A varint of any length up to the codec's bound (the uncommon case, kept out of the loop). */
function longVarint(bytes: Uint8Array, p: number, end: number): number {
  let z = 0;
  let mul = 1;
  for (let n = 0; n < 8; n++) {
    if (p >= end) corrupt("truncated");
    const b = bytes[p++]!;
    z += (b & 0x7f) * mul;
    if (b < 0x80) {
      varintEnd = p;
      return z;
    }
    mul *= 0x80;
  }
  return corrupt("varint too long");
}

/**
 * One channel of every sample from its stored varints: the decoding of stream-codec's
 * readValues and the writing of writeChannel in one loop, with the same checks.
 */
function writeSpan(key: StreamKey, bytes: Uint8Array, span: ChannelSpan, size: number) {
  const { present, end } = span;
  const scale = STREAM_SCALE[key];
  const decimals = decimalsOf(scale);
  const table = decimals < 0 ? ratioTable(scale) : null;
  const pair = key === "latlng";
  ensure(size * (pair ? 2 * MAX_VALUE_BYTES + 4 : MAX_VALUE_BYTES) + 8);
  const buf = scratch;
  let o = pos;
  let p = span.start;
  let prev = 0;
  let prevLng = 0;
  buf[o++] = 91; // '['
  for (let i = 0; i < size; i++) {
    if (i > 0) buf[o++] = 44; // ','
    if (present !== null && (present[i >> 3]! & (1 << (i & 7))) === 0) {
      buf[o++] = 110; // null
      buf[o++] = 117;
      buf[o++] = 108;
      buf[o++] = 108;
      continue;
    }
    let z: number;
    let b = p < end ? bytes[p]! : 0x80;
    if (b < 0x80) {
      z = b;
      p++;
    } else if (p + 1 < end && (b = bytes[p + 1]!) < 0x80) {
      z = (bytes[p]! & 0x7f) | (b << 7);
      p += 2;
    } else {
      z = longVarint(bytes, p, end);
      p = varintEnd;
    }
    prev += z < 0x80000000 ? ((z & 1) === 0 ? z >>> 1 : -(z >>> 1) - 1) : unzigzag(z);
    if (prev > LIMIT || prev < -LIMIT) corrupt("value out of range");
    if (pair) {
      b = p < end ? bytes[p]! : 0x80;
      if (b < 0x80) {
        z = b;
        p++;
      } else if (p + 1 < end && (b = bytes[p + 1]!) < 0x80) {
        z = (bytes[p]! & 0x7f) | (b << 7);
        p += 2;
      } else {
        z = longVarint(bytes, p, end);
        p = varintEnd;
      }
      prevLng += z < 0x80000000 ? ((z & 1) === 0 ? z >>> 1 : -(z >>> 1) - 1) : unzigzag(z);
      if (prevLng > LIMIT || prevLng < -LIMIT) corrupt("value out of range");
      buf[o++] = 91;
      o = writeDecimal(buf, o, prev, decimals);
      buf[o++] = 44;
      o = writeDecimal(buf, o, prevLng, decimals);
      buf[o++] = 93;
    } else if (table === null) {
      o = writeDecimal(buf, o, prev, decimals);
    } else {
      o = writeRatio(buf, o, table, prev, scale);
    }
  }
  if (p !== end) corrupt("channel length mismatch");
  buf[o++] = 93; // ']'
  pos = o;
}

function writeAnswer(
  args: Args,
  data: QuantisedStreams & { spans?: Partial<Record<StreamKey, ChannelSpan>> },
  indices: number[] | undefined,
  originalSize: number,
  fromSpan?: (key: StreamKey, span: ChannelSpan) => void,
): number {
  const { size, channels } = data;
  if (indices) {
    for (let j = 0; j < indices.length; j++) {
      const i = indices[j]!;
      if (!Number.isInteger(i) || i < 0 || i >= size) throw new RangeError(`streamsJson: index ${i} out of range`);
    }
  }
  pos = 0;
  ascii('{"activity_id":');
  jsonString(args.activityId);
  ascii(',"resolution":');
  jsonString(args.resolution);
  ascii(`,"original_size":${originalSize},"size":${indices ? indices.length : size},"streams":{`);
  let first = true;
  // A manual activity (no samples) answers `streams: {}`.
  for (const key of originalSize === 0 ? [] : STREAM_KEYS) {
    if (!args.keys.includes(key)) continue;
    const ch = channels[key];
    const span = fromSpan && data.spans?.[key];
    if (!ch && !span) continue;
    ascii(first ? `"${key}":` : `,"${key}":`);
    first = false;
    if (span) fromSpan(key, span);
    else writeChannel(key, ch!, size, indices);
  }
  ascii("}}");
  return pos;
}
