import { crc32, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES, inspectUpload, inspectUploadOffThread, type Inspected } from "./detect";
import { parseActivityFile } from "./parse";
import { concat, sample, sampleFiles, utf8 } from "./testing/samples";

/** A 300-point run, as a reviewer generated it: its gzip, damaged, showed how damage was reported. */
function generatedGpx(): Uint8Array {
  const start = Date.UTC(2025, 10, 24, 17, 0, 0);
  const points = Array.from(
    { length: 300 },
    (_, i) =>
      `<trkpt lat="${47 + i * 3e-5}" lon="8"><ele>400</ele><time>${new Date(start + i * 1000).toISOString()}</time><extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>140</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions></trkpt>\n`,
  ).join("");
  return utf8(
    `<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="x" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"><trk><name>Test</name><type>running</type><trkseg>\n${points}</trkseg></trk></gpx>\n`,
  );
}

/** A gzip's bytes as a plain Uint8Array (Buffer's slice would share them). */
const gz = (content: Uint8Array) => new Uint8Array(gzipSync(content));

/** What went wrong with a damaged gzip: "cut off", "damaged", or the reason it was refused for. */
function damage(r: Inspected): string {
  if (r.ok) return "ok";
  if (r.reason !== "invalid_file") return r.reason;
  return /cut off/.test(r.detail) ? "cut off" : /damaged/.test(r.detail) ? "damaged" : r.detail;
}

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

  it.each([
    ["gpx", '<?xml version="1.0"?>\n<gpx version="1.1"><trk><name>Côte d\'Azur – Tour</name><trkseg><trkpt lat="43.7" lon="7.2"><time>2024-01-01T10:00:00Z</time></trkpt></trkseg></trk></gpx>'],
    [
      "tcx",
      '<TrainingCenterDatabase><Activities><Activity Sport="Running"><Notes>Côte d\'Azur – Tour</Notes><Lap StartTime="2024-01-01T10:00:00Z"><TotalTimeSeconds>1</TotalTimeSeconds><Track><Trackpoint><Time>2024-01-01T10:00:00Z</Time></Trackpoint></Track></Lap></Activity></Activities></TrainingCenterDatabase>',
    ],
  ] as const)("%s in Windows-1252 that declares no encoding is read as Windows-1252, not as U+FFFD in its name", (kind, text) => {
    const bytes = new Uint8Array([...text].map((c) => (c === "–" ? 0x96 : c.charCodeAt(0))));
    const r = inspectUpload(bytes);
    expect(r).toMatchObject({ ok: true, kind });
    if (r.ok) expect(parseActivityFile(r.content, kind)[0]!.name).toBe("Côte d'Azur – Tour");
    // UTF-8 stays UTF-8, though the junk some transfers leave after the root is not UTF-8.
    const again = inspectUpload(new Uint8Array([...utf8(text), 0xff, 0xfe, 0x00, 0xc3]));
    expect(again.ok).toBe(true);
    if (again.ok) expect(parseActivityFile(again.content, kind)[0]!.name).toBe("Côte d'Azur – Tour");
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

  describe("however much precedes the root (the kind is read from the root, past everything before it)", () => {
    const withProlog = (bytes: Uint8Array, prolog: string) => {
      const text = new TextDecoder().decode(bytes);
      const declaration = /^\uFEFF?<\?xml[^>]*\?>/.exec(text)?.[0] ?? "";
      return utf8(declaration + prolog + text.slice(declaration.length));
    };
    const prologs: [string, string][] = [
      ["a 70,000-character comment", `<!--${"x".repeat(70_000)}-->`],
      ["70,000 spaces", " ".repeat(70_000)],
      ["a 300 KiB processing instruction and a DOCTYPE", `\n<?app ${"y".repeat(300 * 1024)}?>\n<!DOCTYPE x [<!-- it's ] > --><!ENTITY e "${"z".repeat(100_000)}">]>\n`],
      ["comments up to nearly 25 MiB", `<!--${"c".repeat(MAX_FILE_BYTES - 300_000)}-->`],
    ];
    const files = [
      ["gpx", "run.gpx"],
      ["tcx", "sample.tcx"],
    ] as const;

    it.each(files.flatMap(([kind, name]) => prologs.map(([what, prolog]) => [kind, name, what, prolog] as const)))(
      "%s/%s after %s is that kind, and reads as without it",
      (kind, name, _, prolog) => {
        const original = sample(kind, name);
        const bytes = withProlog(original, prolog);
        expect(bytes.length).toBeLessThanOrEqual(MAX_FILE_BYTES);
        const r = inspectUpload(bytes);
        expect(r).toMatchObject({ ok: true, kind, gzip: false });
        if (prolog.length < 1_000_000) {
          expect(inspectUpload(gz(bytes))).toMatchObject({ ok: true, kind, gzip: true });
          if (r.ok) expect(parseActivityFile(r.content, kind)).toEqual(parseActivityFile(original, kind));
        }
      },
    );

    it("in UTF-16 too", () => {
      const text = `<?xml version="1.0" encoding="UTF-16"?>${" ".repeat(40_000)}<!--${"x".repeat(40_000)}--><gpx></gpx>`;
      expect(inspectUpload(concat(Uint8Array.of(0xff, 0xfe), new Uint8Array(Buffer.from(text, "utf16le"))))).toMatchObject({ ok: true, kind: "gpx" });
    });

    it("what is not XML is still refused, and a long prolog before another root or before text is still refused", () => {
      // (How fast is the bench's business, not a test's: a timed assertion here failed on a busy machine.)
      expect(inspectUpload(new Uint8Array(MAX_FILE_BYTES).fill(0x41))).toMatchObject({ ok: false, reason: "unsupported_file_type" });
      for (const text of [`<!--${"x".repeat(100_000)}--><kml></kml>`, `${" ".repeat(100_000)}gpx`, `<!--${"x".repeat(100_000)}`]) {
        expect(inspectUpload(utf8(text))).toMatchObject({ ok: false, reason: "unsupported_file_type" });
      }
    });
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

  it("inspectUploadOffThread answers as inspectUpload does, whole, too large or not a kind it reads; null for what zlib's one stream refuses (damaged, junk after it) and for a prolog past 256 KiB", async () => {
    const gz = gzipSync(sample("gpx", "blue_hills.gpx"));
    const fit = gzipSync(sample("fit", "garmin-edge-500-activity.fit"));
    const corrupt = Uint8Array.from(fit);
    corrupt[Math.floor(corrupt.length / 2)]! ^= 0xff;
    const cases: [string, Uint8Array][] = [
      ["whole", gz],
      ["two members", concat(gz, gzipSync(utf8("<!-- more -->")))],
      ["cut off", gz.subarray(0, Math.floor(gz.length / 2))],
      ["corrupt", corrupt],
      ["junk after it", concat(fit, utf8("junk"))],
      ["a bomb past 25 MiB", gzipSync(new Uint8Array(MAX_FILE_BYTES + 1).fill(0x20))],
      ["no kind it reads", gzipSync(utf8("hello"))],
      ["not gzip", sample("tcx", "sample.tcx")],
      ["a root after 256 KiB of comment", gzipSync(concat(utf8(`<?xml version="1.0"?><!--${" ".repeat(256 * 1024)}-->`), sample("gpx", "blue_hills.gpx")))],
      ["a root after 200 KiB of whitespace", gzipSync(concat(new Uint8Array(200 * 1024).fill(0x20), sample("gpx", "blue_hills.gpx")))],
    ];
    const refused = new Set(["cut off", "corrupt", "junk after it", "a root after 256 KiB of comment"]);
    for (const [what, bytes] of cases) expect(await inspectUploadOffThread(bytes), what).toEqual(refused.has(what) ? null : inspectUpload(bytes));
  });

  it("inspectUploadOffThread decompresses off the calling thread: the event loop turns while a 25 MiB gzip is read", async () => {
    const bytes = gzipSync(concat(utf8(`<?xml version="1.0"?><gpx>`), new Uint8Array(MAX_FILE_BYTES - 100).fill(0x20), utf8("</gpx>")));
    let turns = 0;
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const r = await inspectUploadOffThread(bytes);
    spinning = false;
    expect(r).toMatchObject({ ok: true, kind: "gpx", gzip: true });
    expect(turns).toBeGreaterThan(0);
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
    const r = inspectUpload(bad);
    expect(r).toMatchObject({ ok: false, reason: "invalid_file" });
    if (!r.ok) expect(r.detail).toMatch(/damaged: its compressed data is corrupt/);
  });

  it("a gzip corrupt in the middle is damaged, not cut off, wherever the damage is", () => {
    // zlib reads damaged data as other data, and when that runs into the end of the file it says
    // "unexpected end of file", as of a cut-off file: this file was reported as cut off.
    const reviewers = gz(generatedGpx());
    for (let i = 2000; i < 2100; i++) reviewers[i]! ^= 0x5a;
    expect(damage(inspectUpload(reviewers))).toBe("damaged");
    const seen = new Map<string, number>();
    for (const [kind, name] of [["gpx", "run.gpx"], ["gpx", "blue_hills.gpx"], ["tcx", "sample.tcx"], ["fit", "garmin-edge-500-activity.fit"]] as const) {
      const whole = gz(sample(kind, name));
      for (let at = 10; at + 8 < whole.length; at += Math.ceil(whole.length / 300)) {
        const bad = whole.slice();
        for (let i = at; i < Math.min(at + 100, whole.length - 8); i++) bad[i]! ^= 0x5a;
        const d = damage(inspectUpload(bad));
        seen.set(d, (seen.get(d) ?? 0) + 1);
      }
    }
    // Damage early in the data leaves too little to tell the kind (unsupported_file_type).
    expect([...seen.keys()].sort()).toEqual(["damaged", "unsupported_file_type"]);
  });

  it("a gzip cut off anywhere is cut off, in its data or in its trailer", () => {
    const whole = gz(sample("gpx", "blue_hills.gpx"));
    for (let n = 300; n < whole.length; n += 7) expect(damage(inspectUpload(whole.subarray(0, n))), `cut at ${n} of ${whole.length}`).toBe("cut off");
    for (let cut = 1; cut <= 8; cut++) expect(damage(inspectUpload(whole.subarray(0, whole.length - cut))), `${cut} bytes cut`).toBe("cut off");
  });

  it("a wrong CRC or length in the trailer is damaged", () => {
    const whole = gz(sample("gpx", "blue_hills.gpx"));
    for (const at of [whole.length - 8, whole.length - 1]) {
      const bad = whole.slice();
      bad[at]! ^= 0x01;
      expect(damage(inspectUpload(bad))).toBe("damaged");
    }
  });

  describe("bytes after a complete gzip (as gzip -d: \"trailing garbage ignored\")", () => {
    const original = generatedGpx();
    const half = Math.floor(original.length / 2);
    const members = [
      ["one member", gz(original)],
      ["two members", concat(gz(original.subarray(0, half)), gz(original.subarray(half)))],
    ] as const;
    const tails = [
      ["junk", utf8("garbage garbage")],
      ["NUL padding", new Uint8Array(4096)],
      ["a NUL, then junk", concat(new Uint8Array(1), utf8("garbage"))],
      ["a single byte", Uint8Array.of(0x1f)],
      ["random bytes", Uint8Array.from({ length: 1000 }, (_, i) => (i * 73 + 41) % 256 || 1)],
      ["a plain copy of the file", original],
    ] as const;

    it.each(members.flatMap(([m, bytes]) => tails.map(([t, tail]) => [m, t, bytes, tail] as const)))("%s, then %s: the members' content", (_, __, bytes, tail) => {
      const r = inspectUpload(concat(bytes, tail));
      expect(r).toMatchObject({ ok: true, kind: "gpx", gzip: true });
      if (r.ok) expect(Buffer.from(r.content).equals(Buffer.from(original))).toBe(true);
    });

    it("a member that follows (1f 8b) is read, and one cut off or damaged fails the file as such", () => {
      const first = gz(original.subarray(0, half));
      const second = gz(original.subarray(half));
      expect(damage(inspectUpload(concat(first, second.subarray(0, 6))))).toBe("cut off");
      expect(damage(inspectUpload(concat(first, second.subarray(0, second.length - 20))))).toBe("cut off");
      const bad = second.slice();
      bad[bad.length - 5]! ^= 0xff;
      expect(damage(inspectUpload(concat(first, bad)))).toBe("damaged");
      expect(damage(inspectUpload(concat(first, Uint8Array.of(0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0))))).toBe("damaged");
    });

    it("a damaged member is damaged whatever follows it", () => {
      const bad = gz(original);
      bad[bad.length - 8]! ^= 0x01;
      expect(damage(inspectUpload(concat(bad, utf8("garbage garbage"))))).toBe("damaged");
    });

    it("many members are read in one stream; with junk after more than 1,000 of them, the file is damaged", () => {
      // 200,000 empty members after the file (4 MB): read member by member, a new zlib stream
      // each, 1.3 million of them held the request thread for half a minute.
      const empties = new Uint8Array(200_000 * 20);
      const empty = gz(new Uint8Array(0));
      for (let i = 0; i < 200_000; i++) empties.set(empty, i * 20);
      const many = concat(gz(original), empties);
      const r = inspectUpload(many);
      expect(r).toMatchObject({ ok: true, kind: "gpx", gzip: true });
      if (r.ok) expect(Buffer.from(r.content).equals(Buffer.from(original))).toBe(true);
      expect(damage(inspectUpload(concat(many, utf8("garbage garbage"))))).toBe("damaged");
      // A few members and junk are read as before.
      expect(inspectUpload(concat(gz(original), empties.subarray(0, 999 * 20), utf8("garbage")))).toMatchObject({ ok: true, kind: "gpx" });
    });

    it("a bomb followed by junk still stops at 25 MiB, and so do members that only together pass it", () => {
      const bomb = gz(new Uint8Array(MAX_FILE_BYTES + 1024 * 1024));
      expect(inspectUpload(concat(bomb, utf8("garbage")))).toMatchObject({ ok: false, reason: "too_large" });
      const head = utf8('<?xml version="1.0"?><gpx>');
      const part = gz(concat(head, new Uint8Array(MAX_FILE_BYTES / 2 - head.length).fill(0x20)));
      expect(inspectUpload(concat(part, part))).toMatchObject({ ok: true, kind: "gpx" });
      expect(inspectUpload(concat(part, part, gz(Uint8Array.of(0x20))))).toMatchObject({ ok: false, reason: "too_large" });
      expect(inspectUpload(concat(part, part, gz(new Uint8Array(0))))).toMatchObject({ ok: true, kind: "gpx" });
    });
  });

  it("reads a header's optional fields: extra field, name, comment and header CRC", () => {
    const original = sample("gpx", "run.gpx");
    const plain = gz(original);
    const FHCRC = 0x02;
    const FEXTRA = 0x04;
    const FNAME = 0x08;
    const FCOMMENT = 0x10;
    const header = plain.slice(0, 10);
    header[3] = FHCRC | FEXTRA | FNAME | FCOMMENT;
    const fields = concat(header, Uint8Array.of(3, 0, 0x41, 0x42, 0x43), utf8("run.gpx\0"), utf8("a comment\0"));
    const crc = crc32(fields) & 0xffff;
    const file = concat(fields, Uint8Array.of(crc & 0xff, crc >> 8), plain.subarray(10));
    const r = inspectUpload(file);
    expect(r).toMatchObject({ ok: true, kind: "gpx", gzip: true });
    if (r.ok) expect(Buffer.from(r.content).equals(Buffer.from(original))).toBe(true);
    const wrongCrc = file.slice();
    wrongCrc[fields.length]! ^= 0xff;
    expect(inspectUpload(wrongCrc)).toMatchObject({ ok: false });
    expect(damage(inspectUpload(fields.subarray(0, 15)))).not.toBe("ok");
  });

  it("a wrong header CRC is damage, as `gzip -t` has it (\"header checksum … != computed checksum\"): invalid_file of the kind inside, not an unknown kind", () => {
    /** `plain` with a name and a header CRC (FHCRC) in its header, that CRC spoilt by `spoil`. */
    const withHeaderCrc = (plain: Uint8Array, spoil: number) => {
      const header = plain.slice(0, 10);
      header[3] = 0x02 | 0x08; // FHCRC, FNAME
      const fields = concat(header, utf8("activity\0"));
      const crc = (crc32(fields) & 0xffff) ^ spoil;
      return concat(fields, Uint8Array.of(crc & 0xff, crc >> 8), plain.subarray(10));
    };
    for (const [kind, name] of [["gpx", "run.gpx"], ["fit", "garmin-edge-500-activity.fit"], ["tcx", "tour_hr.tcx"]] as const) {
      const original = sample(kind, name);
      expect(inspectUpload(withHeaderCrc(gz(original), 0))).toMatchObject({ ok: true, kind, gzip: true });
      for (const spoil of [0x0001, 0x8000, 0xffff]) {
        const r = inspectUpload(withHeaderCrc(gz(original), spoil));
        expect(r, `${name}, CRC ^ ${spoil}`).toMatchObject({ ok: false, reason: "invalid_file", kind, gzip: true });
        if (!r.ok) expect(r.detail).toBe(`The gzip-compressed ${kind.toUpperCase()} file is damaged: the checksum of its header is wrong, so it cannot be read.`);
      }
    }
    // A member after the first whose header CRC is wrong damages the file as well.
    const original = generatedGpx();
    const half = Math.floor(original.length / 2);
    expect(damage(inspectUpload(concat(gz(original.subarray(0, half)), withHeaderCrc(gz(original.subarray(half)), 0x0100))))).toBe("damaged");
  });

  it("a damaged gzip whose first member holds nothing is still recognised by the members after it", () => {
    const original = generatedGpx();
    const whole = gz(original);
    const cut = whole.subarray(0, Math.floor(whole.length * 0.6));
    expect(inspectUpload(concat(gz(new Uint8Array(0)), cut))).toMatchObject({ ok: false, reason: "invalid_file", kind: "gpx", gzip: true });
  });

  it("a truncated gzip whose content cannot be recognised is unsupported_file_type", () => {
    const gz = gzipSync(utf8("just some text ".repeat(1000)));
    expect(inspectUpload(gz.subarray(0, gz.length - 10))).toMatchObject({ ok: false, reason: "unsupported_file_type" });
    expect(inspectUpload(Uint8Array.of(0x1f, 0x8b))).toMatchObject({ ok: false, reason: "unsupported_file_type" });
  });

  it("a gzip bomb stops at 25 MiB of output: too_large", () => {
    // 200 MiB of zeros: inflated whole, it would pass the memory bound below four times over.
    const bomb = gzipSync(new Uint8Array(MAX_FILE_BYTES * 8));
    expect(bomb.length).toBeLessThan(300_000);
    const before = process.memoryUsage().arrayBuffers;
    expect(inspectUpload(bomb)).toMatchObject({ ok: false, reason: "too_large" });
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
