import type { Lap } from "../types";
import type { ExportInput } from "./types";

/** A gap between samples this long (seconds) is written as a pause: the timer stopped. */
export const PAUSE_GAP_S = 30;

/**
 * The activity as GPX and TCX write it. Read back, a GPX or TCX activity starts at its first
 * point (CONTRACT §11), so that point goes within the activity's first second (the start is kept
 * to the second), at the fraction of a second the first sample fell at: the copy then starts,
 * lasts and laps as the activity does. A FIT session that started whole seconds before its first
 * record (garmin-edge-500-activity.fit: 13:00:21 and 13:00:22) comes out with its points and laps
 * those seconds early; only FIT, which says where the session began beside its records, puts them
 * where the device did (fit.ts).
 */
export function firstPointAtStart(a: ExportInput): ExportInput {
  return { ...a, firstSampleOffsetS: a.firstSampleOffsetS - Math.floor(a.firstSampleOffsetS) };
}

/** Seconds from the activity's start to sample `i` (its `time_s` counts from the first sample, which may come after the start). */
export function sampleOffsetS(a: ExportInput, i: number): number {
  return a.firstSampleOffsetS + a.streams.time_s[i]!;
}

/** Seconds from the activity's start to its last sample; 0 without samples. */
export function lastSampleOffsetS(a: ExportInput): number {
  return a.streams.size ? sampleOffsetS(a, a.streams.size - 1) : 0;
}

/** The instant `s` seconds after the activity's start, to the millisecond. */
export function afterStart(a: ExportInput, s: number): Date {
  return new Date(a.startTime.getTime() + Math.round(s * 1000));
}

/** The instant of sample `i`. */
export function sampleTime(a: ExportInput, i: number): Date {
  return afterStart(a, sampleOffsetS(a, i));
}

/**
 * Seconds from the activity's start to the start of a lap. `startOffsetS` counts from the first
 * sample, and finishActivity makes it 0 for a lap that began before that sample (a FIT lap that
 * began with its session, a record or more before the first record): such a lap begins at the
 * activity's start, where the elapsed time it kept was counted from. No lap begins before the
 * activity's start. `firstSampleOffsetS`: the activity's, or where a format puts its first sample.
 */
export function lapStartOffsetS(lap: Pick<Lap, "startOffsetS">, firstSampleOffsetS: number): number {
  return lap.startOffsetS === 0 ? 0 : Math.max(0, firstSampleOffsetS + lap.startOffsetS);
}

/** An instant as RFC 3339 UTC, with milliseconds only when there are some. */
export function isoTime(d: Date): string {
  const s = d.toISOString();
  return s.endsWith(".000Z") ? `${s.slice(0, -5)}Z` : s;
}

/** Text for XML content and attributes: the five predefined entities, and no control characters XML 1.0 forbids. */
export function xmlText(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** A number as XML text: at most `decimals` places, no trailing zeros, never exponent notation. */
export function num(v: number, decimals: number): string {
  const s = v.toFixed(decimals);
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** Whole beats or revolutions per minute from Hz. */
export const perMinute = (hz: number) => Math.round(hz * 60);

/** The sample value of a scalar channel, or null. */
export function at(values: (number | null)[] | undefined, i: number): number | null {
  const v = values?.[i];
  return v == null || !Number.isFinite(v) ? null : v;
}

/** Bytes of each chunk `Utf8Out` writes into. */
const CHUNK_BYTES = 1 << 20;

/**
 * A text document written as UTF-8 while it is made, into chunks of 1 MiB. A GPX or TCX of a
 * week-long activity is hundreds of MB of XML: kept as a string per point and then joined, it
 * was held twice on the heap, as strings, and took a 1 GiB file worker past its limit. Here the
 * heap holds only the point being written; the text is held once, as bytes.
 */
export class Utf8Out {
  private readonly chunks: Uint8Array[] = [];
  private chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  private used = 0;
  private total = 0;

  /** Appends each part's text. */
  push(...parts: string[]): void {
    for (const s of parts) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      if (this.used + s.length * 3 > this.chunk.length) {
        this.seal();
        if (s.length * 3 > CHUNK_BYTES) {
          const big = Buffer.from(s, "utf8");
          this.chunks.push(big);
          this.total += big.byteLength;
          continue;
        }
      }
      this.used += this.chunk.write(s, this.used, "utf8");
    }
  }

  /** The document's bytes, in one array of exactly their length. */
  bytes(): Uint8Array {
    this.seal();
    return Buffer.concat(this.chunks, this.total);
  }

  /** Keeps what the current chunk holds and starts a new one. */
  private seal(): void {
    if (this.used === 0) return;
    this.chunks.push(this.chunk.subarray(0, this.used));
    this.total += this.used;
    this.chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    this.used = 0;
  }
}
