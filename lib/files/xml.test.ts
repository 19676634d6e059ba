import { describe, expect, it } from "vitest";
import { utf8 } from "./testing/samples";
import { FileError } from "./types";
import { XML_SLICE_BYTES, numberOf, parseTime, readXml, xmlRootName } from "./xml";

const iso = (text: string) => {
  const t = parseTime(text);
  return t === null ? null : new Date(t * 1000).toISOString();
};

describe("parseTime", () => {
  it.each([
    ["2024-01-01T10:00:00Z", "2024-01-01T10:00:00.000Z"],
    ["2024-01-01T10:00:00.25Z", "2024-01-01T10:00:00.250Z"],
    ["2024-01-01T10:00:00", "2024-01-01T10:00:00.000Z"],
    ["2024-01-01 10:00:00Z", "2024-01-01T10:00:00.000Z"],
    ["2024-01-01T10:00:00+05:30", "2024-01-01T04:30:00.000Z"],
    ["2024-01-01T10:00:00-0800", "2024-01-01T18:00:00.000Z"],
    ["2024-01-01T10:00:00+14:00", "2023-12-31T20:00:00.000Z"],
    ["2024-02-29T10:00:00Z", "2024-02-29T10:00:00.000Z"],
    ["2000-02-29T10:00:00Z", "2000-02-29T10:00:00.000Z"],
    ["2024-04-30T23:59:59Z", "2024-04-30T23:59:59.000Z"],
    // RFC 3339 (5.6) allows t and z; ISO 8601 its basic form and minutes without seconds.
    ["2024-01-01t10:00:00z", "2024-01-01T10:00:00.000Z"],
    ["2024-01-01T10:00Z", "2024-01-01T10:00:00.000Z"],
    ["20240101T100000Z", "2024-01-01T10:00:00.000Z"],
    ["20240101T100000.5+0100", "2024-01-01T09:00:00.500Z"],
  ])("%s is %s", (text, instant) => {
    expect(iso(text)).toBe(instant);
  });

  it.each([
    ["February 30th", "2025-02-30T17:00:00Z"],
    ["February 29th of a common year", "2025-02-29T17:00:00Z"],
    ["February 29th of a century that is no leap year", "1900-02-29T17:00:00Z"],
    ["April 31st", "2025-04-31T17:00:00Z"],
    ["day 32", "2025-01-32T17:00:00Z"],
    ["day 0", "2025-01-00T17:00:00Z"],
    ["month 13", "2025-13-01T17:00:00Z"],
    ["month 0", "2025-00-01T17:00:00Z"],
    ["hour 24 with minutes", "2025-11-24T24:04:59Z"],
    ["hour 24 with seconds", "2025-11-24T24:00:01Z"],
    ["hour 24 with a fraction of a second", "2025-11-24T24:00:00.5Z"],
    ["hour 25", "2025-11-24T25:00:00Z"],
    ["minute 60", "2025-11-24T17:60:00Z"],
    ["second 61", "2025-11-24T17:00:61Z"],
    ["second 60 where no leap second can be", "2025-11-24T17:00:60Z"],
    ["second 60 at the end of a day that does not end a month", "2016-12-30T23:59:60Z"],
    ["an offset past 14 hours", "2025-11-24T17:00:00+15:00"],
    ["an offset of 14 hours and more", "2025-11-24T17:00:00-14:30"],
    ["offset minutes past 59", "2025-11-24T17:00:00+05:60"],
  ])("%s is not a time (%s): null, not rolled over into another day", (_, text) => {
    expect(parseTime(text)).toBeNull();
  });

  it("24:00:00 is the first instant of the next day, as XML Schema has it", () => {
    expect(iso("2025-11-24T24:00:00Z")).toBe("2025-11-25T00:00:00.000Z");
    expect(iso("2025-12-31T24:00:00.000Z")).toBe("2026-01-01T00:00:00.000Z");
    expect(iso("2024-02-28T24:00:00+01:00")).toBe("2024-02-28T23:00:00.000Z");
  });

  it("a leap second, at the end of a UTC month, is the instant after its minute's 59th second", () => {
    expect(iso("2016-12-31T23:59:60Z")).toBe("2017-01-01T00:00:00.000Z");
    expect(iso("2015-06-30T23:59:60.5Z")).toBe("2015-07-01T00:00:00.500Z");
    // The same second, written in a zone half an hour off the hour.
    expect(iso("2017-01-01T05:29:60+05:30")).toBe("2017-01-01T00:00:00.000Z");
  });

  it("years before 100 are those years (Date.UTC would read 0001 as 1901)", () => {
    expect(iso("0001-01-01T17:00:00Z")).toBe("0001-01-01T17:00:00.000Z");
    expect(iso("0099-12-31T23:59:59Z")).toBe("0099-12-31T23:59:59.000Z");
    expect(iso("0000-02-29T00:00:00Z")).toBe("0000-02-29T00:00:00.000Z");
    expect(iso("0001-02-29T00:00:00Z")).toBeNull();
  });

  it.each(["", "  ", "yesterday", "2025-11-24", "2025-11-24T17Z", "25-11-24T17:00:00Z", "17/05/2026 08:00"])("%j is not a time", (text) => {
    expect(parseTime(text)).toBeNull();
  });
});

describe("xmlRootName", () => {
  /** The size of the slices xmlRootName decodes (64 KiB), to put what it reads across their ends. */
  const SLICE = 64 * 1024;
  /** How much of the head the encoding's sniff reads (decoderFor in xml.ts). */
  const HEAD_BYTES = 200;
  /** Bytes that count how many of them the scan takes (the sum of the spans it asks `subarray` for). */
  class CountedBytes extends Uint8Array {
    read = 0;
    override subarray(begin?: number, end?: number): Uint8Array<ArrayBuffer> {
      const part = Uint8Array.prototype.subarray.call(this, begin, end) as Uint8Array<ArrayBuffer>;
      this.read += part.byteLength;
      return part;
    }
  }
  const utf16le = (s: string) => {
    const b = new Uint8Array(2 + s.length * 2);
    b[0] = 0xff;
    b[1] = 0xfe;
    for (let i = 0; i < s.length; i++) {
      b[2 + i * 2] = s.charCodeAt(i) & 0xff;
      b[3 + i * 2] = s.charCodeAt(i) >> 8;
    }
    return b;
  };

  it.each([
    ["a comment", `<!--${"x".repeat(70_000)}-->`],
    ["whitespace", " \n\t\r".repeat(20_000)],
    ["a processing instruction", `<?app ${"y".repeat(200_000)}?>`],
    ["a DOCTYPE's internal subset", `<!DOCTYPE gpx [${`<!ENTITY e "${"z".repeat(1000)}">`.repeat(100)}]>`],
    ["many short comments", "<!-- c -->\n".repeat(20_000)],
  ])("finds the root after more than 64 KiB of %s", (_, prolog) => {
    const text = `<?xml version="1.0" encoding="UTF-8"?>${prolog}<gpx version="1.1"><trk/></gpx>`;
    expect(text.length).toBeGreaterThan(64 * 1024);
    expect(xmlRootName(utf8(text))).toBe("gpx");
    expect(xmlRootName(utf8(`\uFEFF${text}`))).toBe("gpx");
    expect(xmlRootName(utf16le(text))).toBe("gpx");
  });

  it("finds the root after a prolog that is nearly the whole 25 MiB, reading each byte once", () => {
    const root = utf8("<TrainingCenterDatabase>");
    const bytes = new CountedBytes(25 * 1024 * 1024);
    bytes.set(utf8("<!--"));
    bytes.fill(0x2d, 4, bytes.length - root.length - 3); // dashes, the slowest for finding "-->"
    bytes.set(utf8("-->"), bytes.length - root.length - 3);
    bytes.set(root, bytes.length - root.length);
    expect(xmlRootName(bytes)).toBe("TrainingCenterDatabase");
    // The encoding's look at the head, then every slice once.
    expect(bytes.read).toBeGreaterThanOrEqual(bytes.length);
    expect(bytes.read).toBeLessThanOrEqual(bytes.length + HEAD_BYTES);
  });

  it("reads the end of a comment, a PI or a DOCTYPE, and the root's name, wherever a slice ends in them", () => {
    const cases: [string, string][] = [
      ["<!--", "-->"],
      ["<?pi ", "?>"],
      ["<!DOCTYPE gpx [<!-- ] > ' -->", "]>"],
      ["<!DOCTYPE gpx [<!ENTITY a 'b>]'>", "]>"],
    ];
    for (const [open, close] of cases) {
      for (let shift = -12; shift <= 12; shift++) {
        // The construct closes `shift` characters from the end of the first slice.
        const filler = "x".repeat(SLICE - open.length - close.length + shift);
        const text = `${open}${filler}${close}<gpx/>`;
        expect(xmlRootName(utf8(text)), `${open} … ${close}, shifted ${shift}`).toBe("gpx");
        // A comment that only seems to close where the slice ends is not closed there.
        if (open === "<!--") expect(xmlRootName(utf8(`<!--${filler}- ->-<gpx/>`))).toBeNull();
      }
    }
    for (let pad = SLICE - 20; pad <= SLICE + 5; pad++) {
      expect(xmlRootName(utf8(`${" ".repeat(pad)}<ns:TrainingCenterDatabase xmlns:ns="x">`))).toBe("TrainingCenterDatabase");
      expect(xmlRootName(utf8(`${" ".repeat(pad)}<!DOCTYPE gpx><gpx>`))).toBe("gpx");
    }
  });

  it("a comment or PI inside the internal subset may hold quotes and brackets", () => {
    expect(xmlRootName(utf8(`<!DOCTYPE gpx [ <!-- it's ] > --> <?pi "]>"?> <!ENTITY a "b"> ]><gpx/>`))).toBe("gpx");
  });

  it.each([
    ["text", "hello, this is not XML"],
    ["text after a long comment", `<!--${"x".repeat(100_000)}-->hello`],
    ["a comment that never ends", `<!--${"x".repeat(100_000)}`],
    ["a DOCTYPE that never ends", `<!DOCTYPE gpx [${"x".repeat(100_000)}`],
    ["only whitespace", " ".repeat(100_000)],
    ["nothing", ""],
    ["a '<' and no name", "<  gpx>"],
  ])("%s has no root", (_, text) => {
    expect(xmlRootName(utf8(text))).toBeNull();
  });

  it("refuses bytes that are not XML at once, however many there are", () => {
    const bytes = new CountedBytes(25 * 1024 * 1024).fill(0x41);
    expect(xmlRootName(bytes)).toBeNull();
    // The encoding's look at the head and the first slice: nothing after the first character matters.
    expect(bytes.read).toBeLessThanOrEqual(SLICE + HEAD_BYTES);
  });
});

describe("readXml and a DOCTYPE", () => {
  /** The elements and texts readXml hears of a GPX document, or the FileError it ends with. */
  const read = (text: string): string[] | FileError => {
    const heard: string[] = [];
    try {
      readXml(utf8(text), "GPX", "gpx", { open: (name) => heard.push(`<${name}>`), close: (name, t) => heard.push(`${t}</${name}>`) });
    } catch (e) {
      if (e instanceof FileError) return e;
      throw e;
    }
    return heard;
  };
  const doc = (doctype: string) => `<?xml version="1.0"?>\n${doctype}\n<gpx><name>a &x; b</name></gpx>`;
  const asRead = ["<gpx>", "<name>", "a &x; b</name>", "</gpx>"];

  it.each([
    // sax lost the DOCTYPE at a processing instruction, and found it again only at the next
    // declaration or comment: one last in the subset failed the file.
    ["a processing instruction", `<!DOCTYPE gpx [ <?app x?> <!ENTITY x "y"> ]>`],
    ["a processing instruction last", `<!DOCTYPE gpx [ <!ENTITY x "y"> <?app x?> ]>`],
    ["a processing instruction holding `]>`, last", `<!DOCTYPE gpx [ <!ENTITY x "y"> <?app "]>" ]> ?>]>`],
    ["`]>` in an entity's quoted literal", `<!DOCTYPE gpx [ <!ENTITY x "a]>b"> ]>`],
    ["`]>` in an attribute default and a comment", `<!DOCTYPE gpx [ <!ATTLIST gpx v CDATA 'a]>b'> <!-- ]> --> ]>`],
    ["a processing instruction, over more than one of the reader's slices", `<!DOCTYPE gpx [ <!-- ${"z".repeat(XML_SLICE_BYTES)} --> <?app ${"y".repeat(XML_SLICE_BYTES)} ]> ?> ]>`],
  ])("an internal subset with %s is read past, as the kind sniffer reads it: the document reads, its entities unexpanded", (_, doctype) => {
    expect(xmlRootName(utf8(doc(doctype)))).toBe("gpx");
    expect(read(doc(doctype))).toEqual(asRead);
  });

  it("a billion laughs behind a processing instruction is not expanded either", () => {
    const lol = [`<!ENTITY lol0 "lol">`];
    for (let i = 1; i <= 9; i++) lol.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
    // Expanded, &lol9; would be 3,000,000,000 characters.
    expect(read(`<!DOCTYPE gpx [ <?app x?> ${lol.join("")} ]><gpx><name>&lol9;</name></gpx>`)).toEqual(["<gpx>", "<name>", "&lol9;</name>", "</gpx>"]);
  });

  it("errors after a DOCTYPE of many lines name the line they are on", () => {
    const e = read(`<?xml version="1.0"?>\n<!DOCTYPE gpx [\n<?app x?>\n<!ENTITY x "y">\n]>\n<gpx><name></nmae></gpx>`);
    expect(e).toBeInstanceOf(FileError);
    expect((e as FileError).message).toMatch(/\(line 6: /);
  });

  it.each([
    ["two DOCTYPEs", `<!DOCTYPE gpx [ <?app x?> ]><!DOCTYPE gpx>`],
    ["a DOCTYPE after the root", ""],
  ])("%s are still not well-formed", (_, prolog) => {
    const text = prolog ? `${prolog}<gpx/>` : `<gpx><!DOCTYPE gpx></gpx>`;
    const e = read(text);
    expect(e).toBeInstanceOf(FileError);
    expect((e as FileError).code).toBe("invalid_file");
  });
});

describe("numberOf", () => {
  it("reads the decimal numbers devices write, and nothing else", () => {
    for (const [text, value] of [["12", 12], [" 12. ", 12], [".5", 0.5], ["-3.5e2", -350], ["+4E-1", 0.4], ["0047.10", 47.1]] as const) {
      expect(numberOf(text), text).toBe(value);
    }
    for (const text of ["1.2.3", "e5", "", ".", "12x", "1e", "NaN", "Infinity", "1e400", "0x10", "1".repeat(65)]) expect(numberOf(text), text).toBeNull();
  });

  it("refuses a long run of digits that is no number at once, however long (it held a file worker for its whole minute)", () => {
    // 250,000 digits and an `x` fit in 489 gzip-compressed bytes of a GPX file's <ele>.
    expect(numberOf(`${"1".repeat(250_000)}x`)).toBeNull();
    expect(numberOf(`${"1".repeat(60)}.x`)).toBeNull();
  });
});

describe("readXml and namespaces", () => {
  it("gives each element the namespace its prefix is bound to where it stands: an inner declaration for its subtree only, xmlns=\"\" none, an undeclared prefix none", () => {
    const heard: string[] = [];
    readXml(
      utf8(
        '<gpx xmlns="urn:gpx" xmlns:o="urn:o"><a><o:d/><o:d xmlns:o="urn:other"><o:e/></o:d><o:d/><d xmlns=""><c/></d><c/><y:z/></a></gpx>',
      ),
      "GPX",
      "gpx",
      {
        open: (name, _attrs, depth, namespace) => heard.push(`${depth} ${name} ${namespace}`),
        close: (name, _text, depth, namespace) => heard.push(`/${depth} ${name} ${namespace}`),
      },
    );
    expect(heard.filter((h) => !h.startsWith("/"))).toEqual([
      "1 gpx urn:gpx",
      "2 a urn:gpx",
      "3 d urn:o",
      "3 d urn:other",
      "4 e urn:other",
      "3 d urn:o",
      "3 d ",
      "4 c ",
      "3 c urn:gpx",
      "3 z ",
    ]);
    // An element closes in the namespace it opened in.
    expect(heard).toContain("/3 d urn:other");
    expect(heard).toContain("/4 c ");
  });
});
