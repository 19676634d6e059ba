import { gzipSync } from "node:zlib";
import { CrcCalculator } from "@garmin/fitsdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inspectUpload } from "./detect";
import { parseActivityFile } from "./parse";
import { sample } from "./testing/samples";
import { FileError, FILE_KINDS, type FileKind } from "./types";

// Whatever bytes arrive, inspectUpload answers and parseActivityFile either answers (activities
// with a valid start) or throws a FileError: never another exception (which would surface as a
// 5xx or a stuck upload).

/** Runs the whole read path; returns what went wrong if anything other than a FileError escaped. */
function readPath(bytes: Uint8Array, forcedKind?: FileKind): unknown {
  let inspected;
  try {
    inspected = inspectUpload(bytes);
  } catch (e) {
    return e;
  }
  const kind = forcedKind ?? (inspected.ok ? inspected.kind : null);
  const content = inspected.ok ? inspected.content : bytes;
  if (!kind) return null;
  try {
    // An activity without a real start instant cannot be saved (localDateTimeIn throws on it).
    const bad = parseActivityFile(content, kind).find((a) => !Number.isFinite(a.startTime.getTime()));
    if (bad) return new Error(`an activity without a valid start: ${String(bad.startTime)}`);
  } catch (e) {
    if (!(e instanceof FileError)) return e;
    if (!e.message || (e.code !== "invalid_file" && e.code !== "no_activity_data")) return e;
  }
  return null;
}

const SEEDS: [string, string][] = [
  ["fit", "garmin-edge-820-bike.fit"],
  ["fit", "2015-10-13-08-43-15.fit"],
  ["fit", "compressed-speed-distance.fit"],
  ["gpx", "Friday-Evening-Run.gpx"],
  ["gpx", "missing_hr.gpx"],
  ["tcx", "sample.tcx"],
  ["other", "WorkoutIndividualSteps.fit"],
];
const seeds = SEEDS.map(([folder, name]) => sample(folder, name));

/** A real file with a few of its bytes overwritten, a slice cut out, or its tail cut off. */
const mutated = fc
  .record({
    seed: fc.integer({ min: 0, max: seeds.length - 1 }),
    edits: fc.array(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), byte: fc.integer({ min: 0, max: 255 }) }), { maxLength: 8 }),
    cut: fc.option(fc.record({ from: fc.double({ min: 0, max: 1, noNaN: true }), length: fc.integer({ min: 1, max: 64 }) })),
    keep: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
  })
  .map(({ seed, edits, cut, keep }) => {
    let b = seeds[seed]!.slice();
    for (const e of edits) b[Math.floor(e.at * (b.length - 1))] = e.byte;
    if (cut) {
      const from = Math.floor(cut.from * b.length);
      b = new Uint8Array([...b.subarray(0, from), ...b.subarray(from + cut.length)]);
    }
    if (keep !== null) b = b.subarray(0, Math.floor(keep * b.length));
    return b;
  });

describe("no input escapes as anything but a FileError", () => {
  it("random bytes, read as each kind", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.constantFrom(...FILE_KINDS), (bytes, kind) => {
        expect(readPath(bytes, kind)).toBeNull();
        expect(readPath(bytes)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("random bytes behind a FIT header", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 512 }), fc.boolean(), (body, fixCrc) => {
        const header = new Uint8Array([12, 0x10, 0, 0, 0, 0, 0, 0, 0x2e, 0x46, 0x49, 0x54]);
        new DataView(header.buffer).setUint32(4, fixCrc ? body.length : body.length + 2, true);
        const bytes = new Uint8Array([...header, ...body, 0, 0]);
        expect(readPath(bytes, "fit")).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("mutations of FIT files with the size and CRC made right again, so the decoder sees them", () => {
    fc.assert(
      fc.property(mutated, (bytes) => {
        const h = bytes[0];
        if ((h !== 12 && h !== 14) || bytes.length < h + 3) return;
        const b = bytes.slice();
        new DataView(b.buffer).setUint32(4, b.length - h - 2, true);
        if (h === 14) {
          const hc = CrcCalculator.calculateCRC(b, 0, 12);
          b[12] = hc & 0xff;
          b[13] = hc >> 8;
        }
        const crc = CrcCalculator.calculateCRC(b, 0, b.length - 2);
        b[b.length - 2] = crc & 0xff;
        b[b.length - 1] = crc >> 8;
        expect(readPath(b, "fit")).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("mutations of real files, plain and gzip-compressed", () => {
    fc.assert(
      fc.property(mutated, fc.boolean(), (bytes, gzip) => {
        expect(readPath(gzip ? gzipSync(bytes) : bytes)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("random XML-ish text as GPX and TCX", () => {
    const token = fc.constantFrom(
      "<gpx>", "</gpx>", "<trk>", "</trk>", "<trkseg>", "</trkseg>", '<trkpt lat="1" lon="2">', "</trkpt>",
      "<time>2024-01-01T10:00:00Z</time>", "<time>x</time>", "<ele>-99999</ele>", "<extensions>", "</extensions>",
      "<hr>400</hr>", "<Activity Sport=\"Running\">", "</Activity>", "<Trackpoint>", "</Trackpoint>",
      "<Time>2024-01-01T10:00:01Z</Time>", "&amp;", "&bogus;", "<![CDATA[x]]>", "<!-- c -->", "<", ">", "\"",
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), fc.constantFrom<FileKind>("gpx", "tcx"), (tokens, kind) => {
        const root = kind === "gpx" ? ["<gpx>", "</gpx>"] : ["<TrainingCenterDatabase><Activities>", "</Activities></TrainingCenterDatabase>"];
        const text = root[0] + tokens.join("") + root[1];
        expect(readPath(new TextEncoder().encode(text), kind)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });
});
