import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES, inspectUpload } from "./detect";
import { parseActivityFile } from "./parse";
import { concat, sample, sampleFiles, utf8 } from "./testing/samples";

describe("inspectUpload recognises the kind from the content", () => {
  const all = (["fit", "gpx", "tcx"] as const).flatMap((kind) => sampleFiles(kind).map((f) => [kind, f] as const));

  it.each(all)("%s/%s", (kind, name) => {
    const bytes = sample(kind, name);
    const r = inspectUpload(bytes);
    expect(r).toMatchObject({ ok: true, kind, gzip: false });
    if (r.ok) expect(r.content).toBe(bytes);
  });

  it.each(sampleFiles("other"))("other/%s is FIT (a FIT file without an activity)", (name) => {
    expect(inspectUpload(sample("other", name))).toMatchObject({ ok: true, kind: "fit" });
  });

  it.each([
    ["a BOM and a comment", "\uFEFF<!-- exported --><gpx version=\"1.1\"></gpx>", "gpx"],
    ["a declaration, a stylesheet PI and a DOCTYPE with an internal subset", '<?xml version="1.0"?>\n<?xml-stylesheet href="x.xsl"?>\n<!DOCTYPE gpx [ <!ENTITY a "b>c"> ]>\n<gpx/>', "gpx"],
    ["a namespace prefix on the root", '<?xml version="1.0"?><tcx:TrainingCenterDatabase xmlns:tcx="x"></tcx:TrainingCenterDatabase>', "tcx"],
    ["leading whitespace", "\n\n   <TrainingCenterDatabase>", "tcx"],
  ])("XML with %s", (_, text, kind) => {
    expect(inspectUpload(utf8(text))).toMatchObject({ ok: true, kind });
  });

  it("UTF-16 XML with its BOM", () => {
    const text = '<?xml version="1.0" encoding="UTF-16"?><gpx></gpx>';
    const bytes = new Uint8Array(2 + text.length * 2);
    bytes[0] = 0xff;
    bytes[1] = 0xfe;
    for (let i = 0; i < text.length; i++) bytes[2 + i * 2] = text.charCodeAt(i);
    expect(inspectUpload(bytes)).toMatchObject({ ok: true, kind: "gpx" });
  });

  it.each([
    ["gpx", '<?xml version="1.0" encoding="utf-16"?>\r\n<gpx version="1.1"><trk><name>Løp</name><trkseg><trkpt lat="47.1" lon="8.1"><time>2024-01-01T10:00:00Z</time></trkpt></trkseg></trk></gpx>'],
    [
      "tcx",
      '<?xml version="1.0" encoding="UTF-16"?><TrainingCenterDatabase><Activities><Activity Sport="Running"><Notes>Løp</Notes><Lap StartTime="2024-01-01T10:00:00Z"><TotalTimeSeconds>1</TotalTimeSeconds><Track><Trackpoint><Time>2024-01-01T10:00:00Z</Time></Trackpoint></Track></Lap></Activity></Activities></TrainingCenterDatabase>',
    ],
  ] as const)("%s in UTF-8 that declares UTF-16 (as .NET's StringWriter writes it) is read by its bytes, as UTF-8", (kind, text) => {
    const r = inspectUpload(utf8(text));
    expect(r).toMatchObject({ ok: true, kind });
    if (r.ok) expect(parseActivityFile(r.content, kind)[0]!.name).toBe("Løp");
  });

  it("UTF-16 XML without a BOM, told by its first bytes", () => {
    const text = '<?xml version="1.0" encoding="UTF-16"?><gpx><trk><name>Løp</name><trkseg><trkpt lat="47.1" lon="8.1"><time>2024-01-01T10:00:00Z</time></trkpt></trkseg></trk></gpx>';
    const le = new Uint8Array(Buffer.from(text, "utf16le"));
    const be = le.slice();
    for (let i = 0; i < be.length; i += 2) [be[i], be[i + 1]] = [le[i + 1]!, le[i]!];
    for (const bytes of [le, be]) {
      const r = inspectUpload(bytes);
      expect(r).toMatchObject({ ok: true, kind: "gpx" });
      if (r.ok) expect(parseActivityFile(r.content, "gpx")[0]!.name).toBe("Løp");
    }
  });

  it.each([
    ["empty", new Uint8Array(0)],
    ["plain text", utf8("hello, this is not an activity")],
    ["another XML document", utf8('<?xml version="1.0"?><kml xmlns="http://www.opengis.net/kml/2.2"></kml>')],
    ["HTML", utf8("<!DOCTYPE html><html><body>gpx</body></html>")],
    ["a PNG", Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13)],
    ["a FIT header with its .FIT mark altered", (() => {
      const b = sample("fit", "garmin-edge-820-bike.fit").slice();
      b[9] = 0x58;
      return b;
    })()],
  ])("%s is unsupported_file_type", (_, bytes) => {
    expect(inspectUpload(bytes)).toMatchObject({ ok: false, reason: "unsupported_file_type" });
  });

  it("the name of a file plays no part: a GPX's bytes are GPX whatever it is called", () => {
    // inspectUpload takes only bytes; this pins that a TCX sample is not mistaken for GPX.
    expect(inspectUpload(sample("tcx", "sample.tcx"))).toMatchObject({ kind: "tcx" });
  });
});

describe("gzip", () => {
  it.each([
    ["fit", "garmin-edge-500-activity.fit"],
    ["gpx", "run.gpx"],
    ["tcx", "tour_hr.tcx"],
  ] as const)("a gzip of %s/%s is that kind, decompressed, and parses like the original", (kind, name) => {
    const original = sample(kind, name);
    const r = inspectUpload(gzipSync(original));
    expect(r).toMatchObject({ ok: true, kind, gzip: true });
    if (!r.ok) return;
    expect(Buffer.from(r.content).equals(Buffer.from(original))).toBe(true);
    expect(parseActivityFile(r.content, kind)).toEqual(parseActivityFile(original, kind));
  });

  it("a truncated gzip of a recognisable file is invalid_file, saying it is cut off", () => {
    const gz = gzipSync(sample("gpx", "blue_hills.gpx"));
    const r = inspectUpload(gz.subarray(0, Math.floor(gz.length / 2)));
    expect(r).toMatchObject({ ok: false, reason: "invalid_file" });
    if (!r.ok) expect(r.detail).toMatch(/cut off/);
  });

  it("a gzip corrupt in the middle of a recognisable file is invalid_file", () => {
    const gz = gzipSync(sample("fit", "garmin-edge-500-activity.fit"));
    const bad = gz.slice();
    for (let i = 2000; i < 2100; i++) bad[i] = 0xff;
    expect(inspectUpload(bad)).toMatchObject({ ok: false, reason: "invalid_file" });
  });

  it("a truncated gzip whose content cannot be recognised is unsupported_file_type", () => {
    const gz = gzipSync(utf8("just some text ".repeat(1000)));
    expect(inspectUpload(gz.subarray(0, gz.length - 10))).toMatchObject({ ok: false, reason: "unsupported_file_type" });
    expect(inspectUpload(Uint8Array.of(0x1f, 0x8b))).toMatchObject({ ok: false, reason: "unsupported_file_type" });
  });

  it("a gzip bomb stops at 25 MiB of output: too_large, and quickly", () => {
    const bomb = gzipSync(new Uint8Array(MAX_FILE_BYTES + 1024 * 1024));
    expect(bomb.length).toBeLessThan(100_000);
    const before = process.memoryUsage().arrayBuffers;
    const t = performance.now();
    expect(inspectUpload(bomb)).toMatchObject({ ok: false, reason: "too_large" });
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 * MAX_FILE_BYTES);
  });

  it("a truncated gzip bomb is too_large too, not read past the bound", () => {
    const bomb = gzipSync(new Uint8Array(MAX_FILE_BYTES * 2));
    expect(inspectUpload(bomb.subarray(0, bomb.length - 8))).toMatchObject({ ok: false, reason: "too_large" });
  });

  it("a file over 25 MiB as received is too_large", () => {
    expect(inspectUpload(new Uint8Array(MAX_FILE_BYTES + 1))).toMatchObject({ ok: false, reason: "too_large" });
  });

  it("exactly 25 MiB decompressed is accepted", () => {
    const header = utf8('<?xml version="1.0"?><gpx>');
    const content = concat(header, new Uint8Array(MAX_FILE_BYTES - header.length).fill(0x20));
    expect(inspectUpload(gzipSync(content))).toMatchObject({ ok: true, kind: "gpx" });
  });
});
