import { describe, expect, it } from "vitest";
import { inspectUpload } from "../detect";
import { parseActivityFile } from "../parse";
import { sample, utf8 } from "../testing/samples";
import { FileError, type ParsedActivity } from "../types";
import { XML_SLICE_BYTES } from "../xml";

const gpx = (body: string, head = "") =>
  utf8(`<?xml version="1.0" encoding="UTF-8"?>${head}<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">${body}</gpx>`);

const pt = (t: string, extra = "", lat = 47.1, lon = 8.1) => `<trkpt lat="${lat}" lon="${lon}"><ele>400</ele><time>${t}</time>${extra}</trkpt>`;

function parse(bytes: Uint8Array): ParsedActivity[] {
  return parseActivityFile(bytes, "gpx");
}

function errorOf(bytes: Uint8Array): FileError {
  try {
    parse(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(FileError);
    return e as FileError;
  }
  throw new Error("parsed");
}

describe("GPX", () => {
  it("times going backwards: those samples are dropped, time_s never decreases", () => {
    const [a] = parse(
      gpx(`<trk><trkseg>${[
        pt("2024-01-01T10:00:00Z"),
        pt("2024-01-01T10:00:05Z"),
        pt("2024-01-01T09:59:00Z"), // the clock jumped back
        pt("2024-01-01T10:00:05Z"), // a repeat
        pt("2024-01-01T10:00:10Z"),
      ].join("")}</trkseg></trk>`),
    );
    expect(a!.streams.time_s).toEqual([0, 5, 10]);
  });

  it("points without a time are skipped; a track of them alone is no_activity_data", () => {
    const [a] = parse(gpx(`<trk><trkseg>${pt("2024-01-01T10:00:00Z")}<trkpt lat="1" lon="1"/>${pt("2024-01-01T10:00:01Z")}</trkseg></trk>`));
    expect(a!.streams.size).toBe(2);
    expect(errorOf(gpx(`<trk><trkseg><trkpt lat="1" lon="1"/></trkseg></trk>`)).code).toBe("no_activity_data");
    expect(errorOf(gpx(`<wpt lat="1" lon="1"><time>2024-01-01T10:00:00Z</time></wpt>`)).code).toBe("no_activity_data");
  });

  it("points whose every time is from 1970 (a clock never set) are invalid_file naming those dates, not points without a time", () => {
    const points = Array.from({ length: 120 }, (_, i) => pt(new Date(i * 1000).toISOString()));
    const e = errorOf(gpx(`<trk><trkseg>${points.join("")}</trkseg></trk>`));
    expect(e.code).toBe("invalid_file");
    expect(e.message).toContain("dated from 1970-01-01 00:00 UTC to 1970-01-01 00:01 UTC, before 1990");
    expect(e.message).toMatch(/clock was not set/);
    expect(e.message).not.toMatch(/no point with a time/);
  });

  it("a time that names no real date or time (February 30th, 24:04:59) is no time: the point is skipped, not moved to another day", () => {
    const [a] = parse(
      gpx(`<trk><trkseg>${[
        pt("2025-02-28T17:00:00Z"),
        pt("2025-02-30T17:00:00Z"), // was read as 2025-03-02
        pt("2025-02-28T24:04:59Z"), // was read as 2025-03-01T00:04:59
        pt("2025-02-28T24:00:00Z"), // the first instant of March 1st, as XML Schema has it
      ].join("")}</trkseg></trk>`),
    );
    expect(a!.startTime.toISOString()).toBe("2025-02-28T17:00:00.000Z");
    expect(a!.streams.time_s).toEqual([0, 7 * 3600]);
    // A track of such points alone fails as one of unreadable times, naming one.
    const e = errorOf(gpx(`<trk><trkseg>${pt("2025-02-30T17:00:00Z")}${pt("2025-02-30T17:00:01Z")}</trkseg></trk>`));
    expect(e.code).toBe("invalid_file");
    expect(e.message).toContain(`times cannot be read (such as "2025-02-30T17:00:00Z")`);
  });

  it("points dated in year 0001 are refused naming that year, not 1901", () => {
    const points = Array.from({ length: 61 }, (_, i) => pt(`0001-01-01T17:${String(i).padStart(2, "0").replace("60", "59")}:00Z`));
    const e = errorOf(gpx(`<trk><trkseg>${points.join("")}</trkseg></trk>`));
    expect(e.code).toBe("invalid_file");
    expect(e.message).toContain("dated from 0001-01-01 17:00 UTC to 0001-01-01 17:59 UTC, before 1990");
    expect(e.message).not.toContain("1901");
  });

  it("an extension value out of range does not hide a usable one deeper or later in the point: the first usable is read", () => {
    const ext = [
      // A writer's own <heartrate> beside Garmin's <hr>, shallower, and out of range.
      `<extensions><ns3:TrackPointExtension xmlns:ns3="urn:x"><ns3:hr>150</ns3:hr><ns3:cad>90</ns3:cad></ns3:TrackPointExtension><heartrate>400</heartrate></extensions>`,
      // Out of range in the first <extensions>, usable in the second (Strava writes two).
      `<extensions><hr>0</hr><power>9999</power></extensions><extensions><gpxtpx:TrackPointExtension xmlns:gpxtpx="urn:y"><gpxtpx:hr>150</gpxtpx:hr></gpxtpx:TrackPointExtension><power>250</power></extensions>`,
      // The point's own <power> out of range, its extension's usable.
      `<power>-1</power><extensions><PowerInWatts>250</PowerInWatts><hr>150</hr></extensions>`,
    ];
    const [a] = parse(gpx(`<trk><trkseg>${ext.map((e, i) => pt(`2024-01-01T10:00:0${i}Z`, e)).join("")}</trkseg></trk>`));
    expect(a!.streams.heart_rate_hz).toEqual([2.5, 2.5, 2.5]);
    expect(a!.streams.cadence_hz).toEqual([1.5, null, null]);
    expect(a!.streams.power_w).toEqual([null, 250, 250]);
  });

  it("extensions under any prefix: hr, cad, atemp, and Strava's <power>", () => {
    const ext = (p: string) =>
      `<extensions><power>250</power><${p}:TrackPointExtension><${p}:atemp>21.5</${p}:atemp><${p}:hr>150</${p}:hr><${p}:cad>90</${p}:cad></${p}:TrackPointExtension></extensions>`;
    const [a] = parse(
      gpx(
        `<trk><name>Ride &amp; coffee</name><type>cycling</type><trkseg>${pt("2024-01-01T10:00:00Z", ext("gpxtpx"))}${pt("2024-01-01T10:00:01Z", ext("ns3"))}</trkseg></trk>`,
      ),
    );
    expect(a!.name).toBe("Ride & coffee");
    expect(a!.sport).toBe("ride");
    expect(a!.streams.heart_rate_hz).toEqual([2.5, 2.5]);
    expect(a!.streams.cadence_hz).toEqual([1.5, 1.5]);
    expect(a!.streams.temperature_c).toEqual([21.5, 21.5]);
    expect(a!.streams.power_w).toEqual([250, 250]);
    expect(a!.totals.averagePowerW).toBe(250);
  });

  it.each([
    ["running", "run"],
    ["9", "run"],
    ["biking", "ride"],
    ["1", "ride"],
    ["hiking", "hike"],
    ["10", "walk"],
    ["swimming", "swim"],
    ["kayaking", "other"],
  ])("type %s is %s", (type, sport) => {
    const [a] = parse(gpx(`<trk><type>${type}</type><trkseg>${pt("2024-01-01T10:00:00Z")}</trkseg></trk>`));
    expect(a!.sport).toBe(sport);
  });

  it("the name falls back to metadata/name; times without a zone are UTC", () => {
    const [a] = parse(gpx(`<metadata><name>Morning</name></metadata><trk><trkseg>${pt("2024-01-01T10:00:00")}</trkseg></trk>`));
    expect(a!.name).toBe("Morning");
    expect(a!.startTime.toISOString()).toBe("2024-01-01T10:00:00.000Z");
    expect(a!.totals.elapsedTimeS).toBe(1);
  });

  it("a pause between segments is not moving time, and its gap adds no distance", () => {
    const seg1 = [0, 10, 20].map((s, i) => pt(`2024-01-01T10:00:${String(s).padStart(2, "0")}Z`, "", 47 + i * 0.0005, 8)).join("");
    const seg2 = [0, 10].map((s, i) => pt(`2024-01-01T10:30:${String(s).padStart(2, "0")}Z`, "", 47.01 + i * 0.0005, 8)).join("");
    const [a] = parse(gpx(`<trk><trkseg>${seg1}</trkseg><trkseg>${seg2}</trkseg></trk>`));
    expect(a!.totals.elapsedTimeS).toBe(30 * 60 + 10);
    expect(a!.totals.movingTimeS).toBe(30);
    // Three 0.0005° steps of latitude, about 55.6 m each.
    expect(a!.totals.distanceM!).toBeGreaterThan(160);
    expect(a!.totals.distanceM!).toBeLessThan(170);
  });

  it("each track with times is one activity", () => {
    const acts = parse(gpx(`<trk><name>A</name><trkseg>${pt("2024-01-01T10:00:00Z")}</trkseg></trk><trk><name>B</name><trkseg>${pt("2024-01-02T10:00:00Z")}</trkseg></trk>`));
    expect(acts.map((a) => a.name)).toEqual(["A", "B"]);
  });

  it.each([
    ["cut in the middle of a tag", (s: string) => s.slice(0, Math.floor(s.length / 2))],
    ["cut before the closing root", (s: string) => s.slice(0, s.lastIndexOf("</gpx>"))],
    ["a mismatched tag", (s: string) => s.replace("</trkseg>", "</trksg>")],
    ["a tag name holding a NUL and a bidi override", (s: string) => s.replace("<trkseg>", "<trk\u0000\u202eseg>")],
  ])("not well-formed XML (%s) is invalid_file", (_, cut) => {
    const text = new TextDecoder().decode(sample("gpx", "run.gpx"));
    const e = errorOf(utf8(cut(text)));
    expect(e.code).toBe("invalid_file");
    expect(e.message).toMatch(/not well-formed/);
    // The message quotes the file: what it quotes is shown and stored, so it stays printable.
    expect(e.message).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });

  it("reads UTF-8 and UTF-16 whose characters straddle the slices it decodes, and a declared ISO-8859-1, as the same activity", () => {
    const doc = (padding: number, encoding: string, name: string) =>
      `<?xml version="1.0" encoding="${encoding}"?><gpx version="1.1" creator="test"><metadata><desc>${"x".repeat(padding)}</desc></metadata>` +
      `<trk><name>${name}</name><trkseg>${pt("2024-01-01T10:00:00Z")}${pt("2024-01-01T10:00:05Z", "", 47.1001)}</trkseg></trk></gpx>`;
    /** Characters (all ASCII) before the name with no padding. */
    const head = (encoding: string) => doc(0, encoding, "").indexOf("<trk><name>") + "<trk><name>".length;
    const runner = "\u{1F3C3} Løp";
    // UTF-8: the runner's four bytes begin two before the first slice ends.
    const u8 = utf8(doc(XML_SLICE_BYTES - 2 - head("UTF-8"), "UTF-8", runner));
    expect(new TextDecoder().decode(u8.subarray(XML_SLICE_BYTES - 2, XML_SLICE_BYTES + 2))).toBe("\u{1F3C3}");
    const [a8] = parse(u8);
    expect(a8!.name).toBe(runner);
    // UTF-16LE after its BOM: the runner's two code units on either side of the slices' edge.
    const text16 = doc(XML_SLICE_BYTES / 2 - 1 - head("UTF-16"), "UTF-16", runner);
    const u16 = new Uint8Array(Buffer.from(`\ufeff${text16}`, "utf16le"));
    const [a16] = parse(u16);
    expect(a16!.name).toBe(runner);
    expect(a16!.streams).toEqual(a8!.streams);
    // Latin-1 as declared: one byte per character.
    const [latin] = parse(new Uint8Array(Buffer.from(doc(10, "ISO-8859-1", "Løp Zürich"), "latin1")));
    expect(latin!.name).toBe("Løp Zürich");
    expect(latin!.streams).toEqual(a8!.streams);
  });

  it("what careless writers leave (a bare &, unknown entities, an attribute without a value) is kept as written, and the file read", () => {
    const cases: [string, string][] = [
      ["Run & Bike", "Run & Bike"],
      ["Run &foo; Bike", "Run &foo; Bike"],
      // HTML's named entities are known; a name's spaces, this one too, are one plain space.
      ["Run&nbsp;Bike", "Run Bike"],
      ["a&#0;b", "a&#0;b"],
    ];
    for (const [written, read] of cases) expect(parse(gpx(`<trk><name>${written}</name><trkseg>${pt("2024-01-01T10:00:00Z")}</trkseg></trk>`))[0]!.name).toBe(read);
    const bare = new TextDecoder().decode(gpx(`<trk><name>A</name><trkseg>${pt("2024-01-01T10:00:00Z")}</trkseg></trk>`)).replace('creator="test"', 'creator="test" standalone');
    expect(parse(utf8(bare))[0]!.name).toBe("A");
  });

  it("long comments, attribute values and DOCTYPEs (over sax's own 64 KiB buffers) are read like short ones", () => {
    // Longer than two of the reader's slices: sax checks its buffers where a slice ends.
    const long = "z".repeat(2 * XML_SLICE_BYTES + 100);
    const doc = gpx(`<!-- ${long} --><trk><name>Long</name><trkseg>${pt("2024-01-01T10:00:00Z")}<?app ${long}?>${pt("2024-01-01T10:00:01Z")}</trkseg></trk>`, `<!DOCTYPE gpx [<!-- ${long} -->]>`);
    const withAttribute = utf8(new TextDecoder().decode(doc).replace('creator="test"', `creator="${long}"`));
    for (const bytes of [doc, withAttribute]) {
      const [a] = parse(bytes);
      expect(a!.name).toBe("Long");
      expect(a!.streams.size).toBe(2);
    }
  });

  it("what follows the root element (NUL padding, junk a transfer left) is not read: the same activities", () => {
    const file = sample("gpx", "run.gpx");
    const expected = parse(file);
    for (const tail of [new Uint8Array(4096), utf8("garbage <not xml"), utf8("<trk><trkseg></trk>"), utf8("\n<?app x?>\n<!-- c -->\n<junk/><gpx>")]) {
      expect(parse(new Uint8Array([...file, ...tail]))).toEqual(expected);
    }
  });

  it("points whose times cannot be read: the file fails naming such a time, not as one without times", () => {
    const e = (() => {
      try {
        return parse(gpx(`<trk><trkseg>${pt("17/05/2026 08:00:00")}${pt("17/05/2026 08:00:01")}</trkseg></trk>`));
      } catch (err) {
        return err;
      }
    })();
    expect(e).toMatchObject({ code: "invalid_file", message: expect.stringContaining(`times cannot be read (such as "17/05/2026 08:00:00")`) });
    // A point with no time at all is a route point, as before.
    expect(() => parse(gpx(`<trk><trkseg><trkpt lat="1" lon="1"></trkpt></trkseg></trk>`))).toThrow(/no point with a time/);
  });

  it("a second GPX document after the first (two files joined, two gzip members) fails the file: its activity is not dropped silently", () => {
    const file = sample("gpx", "run.gpx");
    for (const between of ["", "\n", "\n<!-- next -->\n"]) {
      const e = (() => {
        try {
          return parse(new Uint8Array([...file, ...utf8(between), ...file]));
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(FileError);
      expect(e).toMatchObject({ code: "invalid_file", message: expect.stringMatching(/second GPX document/) });
    }
  });

  it("a billion-laughs DOCTYPE is not expanded: small, and the document still reads", () => {
    const lol = [`<!ENTITY lol0 "lol">`];
    for (let i = 1; i <= 9; i++) lol.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
    const doc = gpx(`<trk><name>&lol9;</name><trkseg>${pt("2024-01-01T10:00:00Z")}</trkseg></trk>`, `<!DOCTYPE gpx [${lol.join("")}]>`);
    const before = process.memoryUsage().heapUsed;
    let result: ParsedActivity[] | FileError;
    try {
      result = parse(doc);
    } catch (e) {
      result = e as FileError;
    }
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(50 * 1024 * 1024);
    if (result instanceof FileError) {
      expect(result.code).toBe("invalid_file");
    } else {
      expect(result[0]!.name!.length).toBeLessThanOrEqual(200);
      expect(result[0]!.name).not.toContain("lollollol");
    }
  });

  it("a real file with a DOCTYPE whose internal subset ends in a processing instruction is recognised and reads as without it", () => {
    const file = sample("gpx", "run.gpx");
    const text = new TextDecoder().decode(file);
    const declaration = text.indexOf("?>") + 2;
    const doctype = `\n<!DOCTYPE gpx [\n  <!ENTITY x "a]>b">\n  <?app "]>" ?>\n]>`;
    const withDoctype = utf8(text.slice(0, declaration) + doctype + text.slice(declaration));
    const inspected = inspectUpload(withDoctype);
    expect(inspected).toMatchObject({ ok: true, kind: "gpx" });
    expect(parse(withDoctype)).toEqual(parse(file));
  });

  it("an external entity is not fetched or expanded", () => {
    const doc = gpx(`<trk><name>&xxe;</name><trkseg>${pt("2024-01-01T10:00:00Z")}</trkseg></trk>`, `<!DOCTYPE gpx [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`);
    let name: string | null = null;
    try {
      name = parse(doc)[0]!.name;
    } catch (e) {
      expect(e).toBeInstanceOf(FileError);
    }
    expect(name ?? "").not.toContain("root:");
  });

  it("nesting deeper than any GPX needs is invalid_file, not a stack overflow", () => {
    const deep = "<extensions>".repeat(5000) + "</extensions>".repeat(5000);
    const e = errorOf(gpx(`<trk><trkseg><trkpt lat="1" lon="1"><time>2024-01-01T10:00:00Z</time>${deep}</trkpt></trkseg></trk>`));
    expect(e.code).toBe("invalid_file");
  });

  it("a point marked <fix>none</fix> has no position but keeps its time and channels", () => {
    const hr = (v: number) => `<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>${v}</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>`;
    const [a] = parse(
      gpx(
        `<trk><trkseg>` +
          `<trkpt lat="47.1" lon="8.1"><time>2024-01-01T10:00:00Z</time><fix>none</fix>${hr(100)}</trkpt>` +
          `<trkpt lat="47.1" lon="8.1"><time>2024-01-01T10:00:10Z</time><fix>3d</fix>${hr(110)}</trkpt>` +
          `<trkpt lat="47.101" lon="8.1"><time>2024-01-01T10:00:20Z</time>${hr(120)}</trkpt>` +
          `<trkpt lat="47.101" lon="8.1"><time>2024-01-01T10:00:30Z</time><fix> none </fix>${hr(130)}</trkpt>` +
          `</trkseg></trk>`,
      ),
    );
    expect(a!.startTime.toISOString()).toBe("2024-01-01T10:00:00.000Z");
    expect(a!.totals.elapsedTimeS).toBe(30);
    expect(a!.streams.latlng).toEqual([null, [47.1, 8.1], [47.101, 8.1], null]);
    expect(a!.streams.heart_rate_hz!.map((v) => v! * 60)).toEqual([100, 110, 120, 130]);
    expect(a!.totals.distanceM).toBeCloseTo(111.2, 0);
  });

  it("distance from gpxdata:distance when (nearly) every point carries it, else measured along the points", () => {
    const dist = (m: number) => `<extensions><gpxdata:distance>${m}</gpxdata:distance></extensions>`;
    const times = Array.from({ length: 20 }, (_, i) => `2024-01-01T10:00:${String(i).padStart(2, "0")}Z`);
    // Each point 0.0005° of latitude (55.6 m) on; the device says 10 m a second (a wheel, a footpod).
    const track = (carries: (i: number) => boolean) =>
      gpx(`<trk><trkseg>${times.map((t, i) => pt(t, carries(i) ? dist(1000 + i * 10) : "", 47 + i * 0.0005)).join("")}</trkseg></trk>`);
    const [all] = parse(track(() => true));
    expect(all!.totals.distanceM).toBe(190);
    // Counted from the first point, where the device's distance was 1,000 m.
    expect([all!.streams.distance_m![0], all!.streams.distance_m![19]]).toEqual([0, 190]);
    // 18 of 20 (90%): the device's, a missing one null.
    const [most] = parse(track((i) => i !== 3 && i !== 7));
    expect(most!.totals.distanceM).toBe(190);
    expect(most!.streams.distance_m![3]).toBeNull();
    // 2 of 20: too few to be the activity's distance.
    const [few] = parse(track((i) => i < 2));
    expect(few!.totals.distanceM).toBeCloseTo(19 * 55.6, -1);
    expect(few!.streams.distance_m![1]).toBeCloseTo(55.6, 0);
    // Only the points with a fix count: an open-water swim (as this service's own GPX export
    // writes it) has a position, and a distance, only when the arm is out of the water. Every
    // other point here has no fix and no distance: the device's distance, not 1 km measured
    // along the positions.
    const [swim] = parse(
      gpx(`<trk><trkseg>${times.map((t, i) => pt(t, i % 2 === 0 ? dist(1000 + i * 10) : "<fix>none</fix>", 47 + i * 0.0005)).join("")}</trkseg></trk>`),
    );
    expect(swim!.streams.latlng!.filter((p) => p !== null)).toHaveLength(10);
    expect(swim!.totals.distanceM).toBe(180);
    expect(swim!.streams.distance_m![18]).toBe(180);
  });

  it("OpenTracks' per-point sensor distance is not the distance: Cluetrust's cumulative one beside it is, or the track measured", () => {
    // A ride north at about 8 m/s (0.000072° of latitude a second) for 10 minutes, as OpenTracks
    // writes a point with a speed sensor: the distance since the point before, then (newer
    // versions) the distance so far; the prefixes bound where OpenTracks binds them.
    const head = ' xmlns:opentracks="http://opentracksapp.com/xmlschemas/v1" xmlns:cluetrust="http://www.cluetrust.com/Schemas/" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2"';
    const at = (i: number) => new Date(Date.UTC(2024, 5, 1, 6) + i * 1000).toISOString();
    const file = (ext: (i: number) => string) =>
      utf8(
        `<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="OpenTracks" xmlns="http://www.topografix.com/GPX/1/1"${head}><trk><trkseg>` +
          Array.from({ length: 600 }, (_, i) => pt(at(i), `<extensions>${ext(i)}</extensions>`, 47 + i * 0.000072, 8)).join("") +
          "</trkseg></trk></gpx>",
      );
    const step = (i: number) => (i === 0 ? 0 : 7.9 + (i % 3) * 0.1);
    const sofar = (i: number) => Array.from({ length: i + 1 }, (_, k) => step(k)).reduce((a, b) => a + b, 0);
    const [both] = parse(file((i) => `<opentracks:distance>${step(i).toFixed(2)}</opentracks:distance><cluetrust:distance>${sofar(i).toFixed(2)}</cluetrust:distance>`));
    expect(both!.totals.distanceM).toBeCloseTo(sofar(599), 0);
    expect(both!.streams.distance_m![300]).toBeCloseTo(sofar(300), 0);
    // Older versions: the step alone, inside Garmin's TrackPointExtension. Measured along the track (8 m a point).
    const [alone] = parse(file((i) => `<gpxtpx:TrackPointExtension><gpxtpx:hr>140</gpxtpx:hr><opentracks:distance>${step(i).toFixed(2)}</opentracks:distance></gpxtpx:TrackPointExtension>`));
    expect(alone!.totals.distanceM! / (599 * 0.000072 * 111_195)).toBeCloseTo(1, 2);
    expect(alone!.streams.heart_rate_hz![10]).toBeCloseTo(140 / 60, 3);
    // The same element under a prefix bound to another vocabulary is a distance as before.
    const [other] = parse(
      utf8(
        `<?xml version="1.0"?><gpx version="1.1" creator="x" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>` +
          Array.from({ length: 600 }, (_, i) => pt(at(i), `<extensions><opentracks:distance xmlns:opentracks="urn:x">${sofar(i).toFixed(2)}</opentracks:distance></extensions>`, 47 + i * 0.000072, 8)).join("") +
          "</trkseg></trk></gpx>",
      ),
    );
    expect(other!.totals.distanceM).toBeCloseTo(sofar(599), 0);
  });

  describe("a position no activity can reach", () => {
    // A run north at 2.8 m/s, one point a second, for an hour: about 10 km.
    const STEP = 2.8 / 111_195;
    const at = (i: number) => new Date(Date.UTC(2024, 0, 1, 10) + i * 1000).toISOString();
    const run = (lonOf: (i: number) => number, seg: (i: number) => boolean = () => false) =>
      gpx(`<trk><trkseg>${Array.from({ length: 3601 }, (_, i) => (seg(i) ? "</trkseg><trkseg>" : "") + pt(at(i), "", 47 + i * STEP, lonOf(i))).join("")}</trkseg></trk>`);

    it("one fix hundreds of kilometres off (a receiver's fault) is dropped from the route and the distance", () => {
      const [a] = parse(run((i) => (i === 1800 ? 11.5 : 8.5)));
      expect(a!.totals.distanceM).toBeCloseTo(3600 * 2.8, -1);
      expect(a!.streams.latlng![1800]).toBeNull();
      expect(a!.streams.latlng![1799]).not.toBeNull();
      expect(a!.streams.latlng![1801]).not.toBeNull();
      expect(a!.laps[0]!.distanceM).toBe(a!.totals.distanceM);
    });

    it("so is a first fix far from a track that agrees with itself (a cold start), and a last one far from the track before it", () => {
      const [first] = parse(run((i) => (i === 0 ? 9.5 : 8.5)));
      expect(first!.streams.latlng![0]).toBeNull();
      expect(first!.totals.distanceM).toBeCloseTo(3599 * 2.8, -1);
      const [last] = parse(run((i) => (i === 3600 ? 9.5 : 8.5)));
      expect(last!.streams.latlng![3600]).toBeNull();
      expect(last!.totals.distanceM).toBeCloseTo(3599 * 2.8, -1);
    });

    it("a track that carries on from somewhere else keeps its points; only the jump is not counted", () => {
      const [a] = parse(run((i) => (i < 1800 ? 8.5 : 9.5)));
      expect(a!.streams.latlng!.every((p) => p !== null)).toBe(true);
      expect(a!.totals.distanceM).toBeCloseTo(3599 * 2.8, -1);
    });

    it("across a pause nothing is judged: the athlete may have travelled", () => {
      const [a] = parse(run((i) => (i === 1800 ? 11.5 : 8.5), (i) => i === 1800 || i === 1801));
      expect(a!.streams.latlng![1800]).toEqual([47 + 1800 * STEP, 11.5]);
    });
  });

  it("GPX 1.0 with CDATA names and no extensions (blue_hills.gpx)", () => {
    const acts = parse(sample("gpx", "blue_hills.gpx"));
    expect(acts.length).toBeGreaterThan(1);
    for (const a of acts) {
      expect(a.streams.heart_rate_hz).toBeUndefined();
      expect(a.totals.averageHeartRateHz).toBeNull();
      expect(a.name).toBeTruthy();
    }
  });
});
