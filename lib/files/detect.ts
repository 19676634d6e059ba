import { promisify } from "node:util";
import { constants, crc32, gunzip as gunzipCallback, gunzipSync, inflateRawSync } from "node:zlib";
import type { FileKind } from "./types";
import { xmlRootName, xmlRootNameWithin } from "./xml";

/** The largest file accepted, as received and after decompression (CONTRACT §11: 413 past it). */
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

export type Inspected =
  | { ok: true; kind: FileKind; gzip: boolean; content: Uint8Array }
  | { ok: false; reason: "unsupported_file_type" | "too_large"; detail: string }
  /** A file of a kind this service reads whose gzip is damaged: the upload takes it and fails with this detail. */
  | { ok: false; reason: "invalid_file"; kind: FileKind; gzip: true; detail: string };

const UNSUPPORTED = "The file is not a FIT, GPX or TCX file (optionally gzip-compressed).";
/** Enough of a damaged gzip to recognise what it holds. */
const HEAD_BYTES = 64 * 1024;

/** The kind a file's content shows, or null: FIT by its header, GPX and TCX by their XML root. */
export function recognise(content: Uint8Array): FileKind | null {
  // However much precedes the root (comments, whitespace, a DOCTYPE): the whole file is looked at.
  return isFit(content) ? "fit" : xmlKind(xmlRootName(content));
}

/**
 * recognise looking at no more than the first `maxBytes` of an XML prolog: undefined when it
 * goes on past them. A gzip of a few kilobytes can hold 25 MiB of whitespace or comment before
 * its root, about 100 ms to scan; that is left to the file worker, off the request thread.
 */
export function recogniseWithin(content: Uint8Array, maxBytes: number): FileKind | null | undefined {
  if (isFit(content)) return "fit";
  const root = xmlRootNameWithin(content, maxBytes);
  return root === undefined ? undefined : xmlKind(root);
}

// ".FIT" at bytes 8–11 marks a FIT file; the header size byte is checked when it is read, so a
// FIT file with a damaged header is a damaged FIT file, not an unknown kind.
const isFit = (b: Uint8Array) => b.length >= 12 && b[8] === 0x2e && b[9] === 0x46 && b[10] === 0x49 && b[11] === 0x54;

function xmlKind(root: string | null): FileKind | null {
  if (root === "gpx") return "gpx";
  if (root === "TrainingCenterDatabase") return "tcx";
  return null;
}

/** How much of a decompressed upload's XML prolog is read on the request thread (recogniseWithin): a device's is a few hundred bytes. */
const PROLOG_ON_THREAD_BYTES = 256 * 1024;

const isGzip = (b: Uint8Array) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

function tooLarge(detail: string): Inspected {
  return { ok: false, reason: "too_large", detail };
}

/**
 * Recognises the kind from the content, never from a file name. gzip is decompressed with a hard
 * bound of MAX_FILE_BYTES of output (zlib stops there, so nothing larger is ever allocated). Never
 * throws.
 */
export function inspectUpload(bytes: Uint8Array): Inspected {
  try {
    if (bytes.length > MAX_FILE_BYTES) return tooLarge("The file is larger than 25 MiB.");
    if (!isGzip(bytes)) {
      const kind = recognise(bytes);
      return kind ? { ok: true, kind, gzip: false, content: bytes } : { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
    }
    let gz: Gunzipped;
    try {
      gz = gunzip(bytes);
    } catch (e) {
      if (isBufferTooLarge(e)) return tooLarge("The file is larger than 25 MiB once decompressed.");
      throw e;
    }
    if (gz.damage) return damagedGzip(bytes, gz.damage);
    const kind = recognise(gz.content);
    return kind ? { ok: true, kind, gzip: true, content: gz.content } : { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
  } catch {
    return { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
  }
}

/**
 * inspectUpload with a gzip file's usual case, one or more whole members and nothing after
 * them, decompressed on libuv's thread pool rather than the calling thread. Null for what zlib
 * refuses there (damage, junk after the last member), which inspectUpload reads member by
 * member, and for content whose XML prolog goes on past PROLOG_ON_THREAD_BYTES: the caller has
 * those read off its thread too (inspectUploadInWorker).
 */
export async function inspectUploadOffThread(bytes: Uint8Array): Promise<Inspected | null> {
  if (bytes.length > MAX_FILE_BYTES || !isGzip(bytes)) return inspectUpload(bytes);
  let content: Uint8Array;
  try {
    content = await gunzipAsync(bytes, { maxOutputLength: MAX_FILE_BYTES });
  } catch (e) {
    if (isBufferTooLarge(e)) return tooLarge("The file is larger than 25 MiB once decompressed.");
    return null;
  }
  try {
    const kind = recogniseWithin(content, PROLOG_ON_THREAD_BYTES);
    if (kind === undefined) return null;
    return kind ? { ok: true, kind, gzip: true, content } : { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
  } catch {
    return { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
  }
}

const gunzipAsync = promisify(gunzipCallback);

function isBufferTooLarge(e: unknown) {
  return e instanceof Error && ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError);
}

/** How a gzip file is damaged: it ends before its last member does, its bytes are wrong, or a header's CRC (FHCRC) does not match the header. */
type Damage = "cut off" | "corrupt" | "header crc";

type Gunzipped = { content: Uint8Array; damage?: undefined } | { damage: Damage };

/** inflateRawSync's answer with `info` (which @types/node does not declare): the output, and how much input the compressed data took. */
type Inflated = { buffer: Uint8Array; engine: { bytesWritten: number } };

/** Members a gzip file that zlib's gunzip refuses is read as, at most (`gunzip`): `cat a.gz b.gz` makes a few. */
const MAX_GZIP_MEMBERS = 1_000;

/** Deflate cannot make output more than this many times its input (one bit per 258-byte match, and the block's overhead). */
const MAX_DEFLATE_RATIO = 1032;

/** How far from the length a damaged file's trailer states its misread data may come (endsWithTrailer): in every damage of the samples that ran to the end, 0.80 to 1.15 times it. */
const LENGTH_SLACK = 1.5;

/**
 * The content of a gzip file: its members' (RFC 1952 lets a file be several, one after another,
 * as `cat a.gz b.gz` makes them), each checked against the CRC-32 and length its trailer holds.
 * What follows the last member and does not begin as another one does (`1f 8b`) is not read, as
 * `gzip -d` ignores it ("trailing garbage ignored"): the NULs or junk a transfer leaves after a
 * file's end, the same as after a plain file's. (Node's gunzip reads whatever follows a member
 * as another, unless it begins with a NUL, and failed junk as corrupt data.) A member that is
 * itself damaged, or cut off, damages the file. Output is bounded by MAX_FILE_BYTES over all the
 * members: zlib stops there and throws (isBufferTooLarge), so a bomb is never inflated whole.
 */
function gunzip(bytes: Uint8Array): Gunzipped {
  // Nearly every file: zlib's own gunzip reads all its members in one stream. Only a file it
  // refuses (junk after the last member, or damage) is read member by member below, which costs
  // a new zlib stream a member: 1.3 million empty members (26 MB) took half a minute that way,
  // on the request thread, and 89 ms in one stream; so that way reads at most MAX_GZIP_MEMBERS.
  try {
    return { content: gunzipSync(bytes, { maxOutputLength: MAX_FILE_BYTES }) };
  } catch (e) {
    if (isBufferTooLarge(e)) throw e;
  }
  const members: Uint8Array[] = [];
  let size = 0;
  let at = 0;
  do {
    if (members.length >= MAX_GZIP_MEMBERS) return { damage: "corrupt" };
    const data = memberData(bytes, at);
    if (typeof data === "string") return { damage: data };
    let inflated: Inflated;
    try {
      inflated = inflateRawSync(bytes.subarray(data), { maxOutputLength: Math.max(1, MAX_FILE_BYTES - size), info: true }) as unknown as Inflated;
    } catch (e) {
      if (isBufferTooLarge(e)) throw e;
      // zlib's "unexpected end of file": the input ran out before the compressed data ended.
      if ((e as NodeJS.ErrnoException).code === "Z_BUF_ERROR") return { damage: endsWithTrailer(bytes, data, size) ? "corrupt" : "cut off" };
      return { damage: "corrupt" };
    }
    const out = inflated.buffer;
    const end = data + inflated.engine.bytesWritten;
    // The trailer: CRC-32 and length of the output, little-endian. Fewer than its 8 bytes, if
    // they are right so far, mean the file was cut in it.
    const trailer = new Uint8Array(8);
    const view = new DataView(trailer.buffer);
    view.setUint32(0, crc32(out), true);
    view.setUint32(4, out.length, true);
    const written = bytes.subarray(end, end + 8);
    if (written.some((b, i) => b !== trailer[i])) return { damage: "corrupt" };
    if (written.length < 8) return { damage: "cut off" };
    size += out.length;
    if (size > MAX_FILE_BYTES) throw new RangeError("The content is larger than MAX_FILE_BYTES.");
    members.push(out);
    at = end + 8;
  } while (at + 1 < bytes.length && bytes[at] === 0x1f && bytes[at + 1] === 0x8b);
  return { content: members.length === 1 ? members[0]! : concat(members, size) };
}

/**
 * Where the compressed data of the member at `at` begins, past its header (RFC 1952, 2.3), or how
 * the header is damaged. A header CRC that does not match damages the file, as `gzip -t` has it
 * ("header checksum … != computed checksum"), unless `checkCrc` is false: where the data is read
 * only to see what kind of file it holds (damagedGzip).
 */
function memberData(bytes: Uint8Array, at: number, checkCrc = true): number | Damage {
  const FHCRC = 0x02;
  const FEXTRA = 0x04;
  const FNAME = 0x08;
  const FCOMMENT = 0x10;
  const RESERVED = 0xe0;
  if (at + 10 > bytes.length) return "cut off";
  const flags = bytes[at + 3]!;
  // 1f 8b, then deflate (8), the only method there is.
  if (bytes[at] !== 0x1f || bytes[at + 1] !== 0x8b || bytes[at + 2] !== 8 || flags & RESERVED) return "corrupt";
  let i = at + 10;
  if (flags & FEXTRA) {
    if (i + 2 > bytes.length) return "cut off";
    i += 2 + (bytes[i]! | (bytes[i + 1]! << 8));
    if (i > bytes.length) return "cut off";
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const nul = bytes.indexOf(0, i);
    if (nul < 0) return "cut off";
    i = nul + 1;
  }
  if (flags & FHCRC) {
    if (i + 2 > bytes.length) return "cut off";
    if (checkCrc && (crc32(bytes.subarray(at, i)) & 0xffff) !== (bytes[i]! | (bytes[i + 1]! << 8))) return "header crc";
    i += 2;
  }
  return i;
}

/**
 * Whether the file, whose compressed data from `data` on ran into its end, ends with the trailer
 * of that data: then the data is damaged, not cut off. zlib cannot tell the two apart (nor can
 * `gzip -d`, which says "unexpected end of file" of both): damaged data is read as other data,
 * and may show no error until the input runs out, as a cut-off file's does. What tells them apart
 * is the file's end. A whole file ends with the length of its content (the trailer's last four
 * bytes), and damage that goes unnoticed to the end lies near it (a long stretch of misread data
 * meets an invalid code), so nearly all of the data is read as written and comes to about that
 * length. A cut-off file ends in compressed data, which read as a length is as good as random,
 * and is seldom one this service takes, that so much data can hold, and within LENGTH_SLACK of
 * what was read (no cut of the test samples' gzips, every 1/3000th of each, was such); one that
 * is is called damaged, which it also is. (`before` is the output of the members before it.)
 */
function endsWithTrailer(bytes: Uint8Array, data: number, before: number): boolean {
  const compressed = bytes.length - data - 8;
  if (compressed <= 0) return false;
  const length = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true);
  if (length > Math.min(MAX_FILE_BYTES - before, compressed * MAX_DEFLATE_RATIO)) return false;
  let read: number;
  try {
    read = inflateRawSync(bytes.subarray(data), { maxOutputLength: Math.max(1, MAX_FILE_BYTES - before), finishFlush: constants.Z_SYNC_FLUSH }).length;
  } catch {
    return false;
  }
  return read <= length * LENGTH_SLACK && length <= read * LENGTH_SLACK;
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** What a damaged gzip's detail says of each damage, after "The gzip-compressed GPX file is". */
const DAMAGE_DETAIL: Record<Damage, string> = {
  "cut off": "cut off: it ends before its compressed data does (it may not have finished copying)",
  corrupt: "damaged: its compressed data is corrupt, so it cannot be read",
  "header crc": "damaged: the checksum of its header is wrong, so it cannot be read",
};

/**
 * A gzip that did not decompress whole (`damage` says why). If what does decompress shows a kind
 * we read, the file is that kind, damaged (`invalid_file`, so the upload records the failure);
 * else it is unknown. What decompresses is read by zlib's gunzip (every member, as far as it
 * goes) or, where that gives nothing, from the first member's compressed data with its header
 * skipped here without its CRC: zlib refuses a member whose header CRC is wrong before giving a
 * byte, and such a file is as damaged as one whose data is, not of an unknown kind.
 */
function damagedGzip(bytes: Uint8Array, damage: Damage): Inspected {
  const data = memberData(bytes, 0, false);
  const opts = { maxOutputLength: MAX_FILE_BYTES, finishFlush: constants.Z_SYNC_FLUSH };
  const attempt = (read: () => Uint8Array): Uint8Array | null => {
    try {
      const out = read();
      return out.length > 0 ? out : null;
    } catch (e) {
      if (isBufferTooLarge(e)) throw e;
      return null;
    }
  };
  const partial = (end: number): Uint8Array | null =>
    attempt(() => gunzipSync(bytes.subarray(0, end), opts)) ??
    (typeof data === "string" || end <= data ? null : attempt(() => inflateRawSync(bytes.subarray(data, end), opts)));
  let head: Uint8Array | null;
  try {
    head = partial(bytes.length);
    // Damage in the data stops zlib with nothing to show, so shorter and shorter heads are
    // tried: one that ends before the damage decompresses, and the kind shows in its first bytes.
    for (let n = HEAD_BYTES; !head && n >= 256; n >>= 2) head = partial(n);
  } catch {
    return tooLarge("The file is larger than 25 MiB once decompressed.");
  }
  const kind = head && head.length > 0 ? recognise(head) : null;
  if (!kind) return { ok: false, reason: "unsupported_file_type", detail: `The gzip file is damaged and what it holds cannot be recognised. ${UNSUPPORTED}` };
  const what = kind.toUpperCase();
  return {
    ok: false,
    reason: "invalid_file",
    kind,
    gzip: true,
    detail: `The gzip-compressed ${what} file is ${DAMAGE_DETAIL[damage]}.`,
  };
}
