import { isUtf8 } from "node:buffer";
import sax from "sax";
import { FileError } from "./types";

// GPX and TCX are read as a stream of elements (sax, in strict mode), never as a whole document:
// a 25 MiB file is decoded and parsed a slice at a time, and a reader keeps only what it is
// building (the samples, the element it is in). Set up for files nobody vouches for:
// - entities a DOCTYPE declares are never expanded (an entity bomb stays inert text, an external
//   entity is never fetched): a reference to one is kept as written; the predefined entities,
//   character references and HTML's named ones are decoded. sax is not given the DOCTYPE at all
//   (withoutDoctype): it reads no DTD, and the prolog scanner below finds where one ends;
// - namespace prefixes are removed, since writers choose their own (gpxtpx:, ns3:, ns2:, none);
// - values stay strings: numbers are parsed where a number is expected;
// - nesting is bounded, and anything not well-formed (a cut-off file, a mismatched tag) fails the
//   file with the parser's reason and line, but for the slips that leave the structure whole
//   (TOLERATED, below);
// - reading ends with the root element: what follows it is not looked at.

/** Elements nested deeper than this fail the file: no GPX or TCX needs a tenth of it. */
export const MAX_XML_DEPTH = 64;

/** How much of the file is decoded and parsed at a time. */
export const XML_SLICE_BYTES = 256 * 1024;

/*
 * sax refuses a comment, DOCTYPE, attribute value or processing instruction longer than its
 * buffer limit (64 KiB unless set) with "Max buffer length exceeded", which would fail a valid
 * file over a long comment. Upload files are at most 25 MiB (detect.ts), so no buffer can
 * outgrow the file: the limit is set above that. sax is read only here. (@types/sax does not
 * declare the setting, which sax has had since its first versions.)
 */
(sax as unknown as { MAX_BUFFER_LENGTH: number }).MAX_BUFFER_LENGTH = 32 * 1024 * 1024;

/**
 * The errors that leave the document's structure whole, which sax recovers from by keeping the
 * text as written, so the file is read on. A reference to an entity no DTD of ours declares (a
 * DOCTYPE's own, an external one) stays as written and is never expanded; so does an `&` that
 * begins no reference ("Run & Bike", as careless writers put it); an attribute written without
 * a value (`<gpx standalone>`) is empty.
 */
const TOLERATED = new Set(["Invalid character entity", "Invalid character in entity name", "Attribute without value"]);

/** What a reader hears of a document, in document order. */
export type XmlHandler = {
  /**
   * An element opens: its name without a prefix, its attributes (names as written, values
   * decoded), its depth (the root is 1), and its namespace's URI ("" for none), from the xmlns
   * declarations in force: two vocabularies may use one name for different things.
   */
  open(name: string, attributes: Record<string, string>, depth: number, namespace: string): void;
  /** An element closes, with the text written directly in it since its last child (CDATA included), and its namespace as it opened. */
  close(name: string, text: string, depth: number, namespace: string): void;
};



const localName = (name: string) => {
  const colon = name.indexOf(":");
  return colon < 0 ? name : name.slice(colon + 1);
};

/**
 * The decoder for a file's bytes and where its text starts: what the bytes show first (a BOM, or
 * the `<?` of the document in UTF-16), then the declared encoding, else UTF-8 (XML 1.0 appendix
 * F, as libxml2 reads it). A declaration cannot make 8-bit text UTF-16: writers that build the
 * document as a string and save it as UTF-8 (.NET's StringWriter) declare `encoding="utf-16"`
 * over UTF-8 bytes, and such bytes are read as UTF-8. Given the root's name (the document is
 * read, not only its prolog), undeclared 8-bit text that is not UTF-8 (a Windows program's
 * "Côte d'Azur" in Windows-1252, the XML rule notwithstanding) is read as Windows-1252, as
 * browsers read such pages, rather than as U+FFFD in every name.
 */
function decoderFor(bytes: Uint8Array, root?: string): { decoder: TextDecoder; skip: number } {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { decoder: new TextDecoder("utf-16le"), skip: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { decoder: new TextDecoder("utf-16be"), skip: 2 };
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { decoder: new TextDecoder("utf-8"), skip: 3 };
  // `<?` in UTF-16 without a BOM.
  if (bytes[0] === 0x3c && bytes[1] === 0x00 && bytes[2] === 0x3f && bytes[3] === 0x00) return { decoder: new TextDecoder("utf-16le"), skip: 0 };
  if (bytes[0] === 0x00 && bytes[1] === 0x3c && bytes[2] === 0x00 && bytes[3] === 0x3f) return { decoder: new TextDecoder("utf-16be"), skip: 0 };
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 200));
  const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]?.toLowerCase();
  if (declared && declared !== "utf-8" && declared !== "utf8") {
    let decoder: TextDecoder | null = null;
    try {
      decoder = new TextDecoder(declared);
    } catch {
      // An encoding the platform does not know: read as UTF-8, which most such files really are.
    }
    // The declaration was read as 8-bit text, so the bytes are not UTF-16 whatever it says.
    if (decoder && !decoder.encoding.startsWith("utf-16")) return { decoder, skip: 0 };
    return { decoder: new TextDecoder("utf-8"), skip: 0 };
  }
  return { decoder: new TextDecoder(declared || root === undefined || isUtf8Document(bytes, root) ? "utf-8" : "windows-1252"), skip: 0 };
}

/**
 * Whether the document's bytes are UTF-8 up to the end of its root (`</root>`, any prefix):
 * what follows it (junk some transfers append) is not the document's text. Node's native check,
 * one pass; documents are read in the file worker.
 */
function isUtf8Document(bytes: Uint8Array, root: string): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const close = buf.lastIndexOf(`${root}>`);
  return isUtf8(close >= 0 ? buf.subarray(0, close + root.length + 1) : buf);
}

/**
 * Reads a GPX or TCX file (`what` names it in errors) element by element into `handler`, up to
 * the end of its root element, which must be named `root`. A document that is not well-formed,
 * has another root, is followed by a second document of the same root, or nests deeper than
 * MAX_XML_DEPTH is a FileError; so is an error the handler throws as one. Other things after the
 * root (NUL padding, junk) end the reading. Only a slice of the file is ever held as text.
 */
export function readXml(bytes: Uint8Array, what: string, root: string, handler: XmlHandler): void {
  const noRoot = () => new FileError("invalid_file", `The ${what} file has no <${root}> element.`);
  let sawRoot = false;
  const parser = sax.parser(true, { trim: false, normalize: false, position: true });
  const names: string[] = [];
  /**
   * The namespace bound to each prefix ("" for xmlns), innermost last, and per open element the
   * prefixes it bound and its namespace's URI: each declaration is pushed and popped once, so a
   * file of many (a hostile one binds thousands on every element) costs what its text does.
   */
  const bindings = new Map<string, string[]>();
  const bound: string[][] = [];
  const namespaces: string[] = [];
  let text = "";
  let failure: string | null = null;
  /** The root has closed: the document is read, and what follows is only looked at for a second one. */
  let ended = false;
  parser.onerror = (err) => {
    // The NUL padding or junk some transfers leave after a file's end is not the file's.
    if (ended) throw new XmlStop();
    const reason = err.message.split("\n", 1)[0]!;
    if (TOLERATED.has(reason)) {
      parser.resume();
      return;
    }
    failure ??= `line ${parser.line + 1}: ${reason.replace(/\.$/, "")}`;
    throw new XmlStop();
  };
  parser.onopentag = (tag) => {
    const name = localName(tag.name);
    if (ended) {
      // Two files joined into one (`cat a.gpx b.gpx`, or two gzip members): reading the first
      // alone would drop the second's activity without a word.
      if (name === root) {
        throw new FileError("invalid_file", `The file holds a second ${what} document after the first (two files joined into one?): upload each file on its own.`);
      }
      throw new XmlStop();
    }
    names.push(name);
    if (names.length === 1) {
      if (name !== root) throw noRoot();
      sawRoot = true;
    } else if (names.length > MAX_XML_DEPTH) {
      throw new FileError("invalid_file", `The ${what} file nests its elements more than ${MAX_XML_DEPTH} deep, which no ${what} file needs.`);
    }
    text = "";
    const attributes = tag.attributes as Record<string, string>;
    const here: string[] = [];
    for (const attr in attributes) {
      if (attr !== "xmlns" && !attr.startsWith("xmlns:")) continue;
      const prefix = attr === "xmlns" ? "" : attr.slice(6);
      let uris = bindings.get(prefix);
      if (!uris) bindings.set(prefix, (uris = []));
      uris.push(attributes[attr]!);
      here.push(prefix);
    }
    bound.push(here);
    const colon = tag.name.indexOf(":");
    const namespace = bindings.get(colon < 0 ? "" : tag.name.slice(0, colon))?.at(-1) ?? "";
    namespaces.push(namespace);
    handler.open(name, attributes, names.length, namespace);
  };
  parser.ontext = parser.oncdata = (t) => {
    text += t;
  };
  parser.onclosetag = () => {
    const depth = names.length;
    const name = names.pop()!;
    for (const prefix of bound.pop()!) bindings.get(prefix)!.pop();
    const namespace = namespaces.pop()!;
    const inside = text;
    text = "";
    handler.close(name, inside, depth, namespace);
    if (depth === 1) ended = true;
  };
  const { decoder, skip } = decoderFor(bytes, root);
  const doctype = scanProlog(bytes).doctype;
  /** How many characters of the document were written to the parser before. */
  let written = 0;
  const write = (text: string) => {
    parser.write(doctype ? withoutDoctype(text, written, doctype) : text);
    written += text.length;
  };
  try {
    for (let at = skip; at < bytes.byteLength; at += XML_SLICE_BYTES) {
      write(decoder.decode(bytes.subarray(at, Math.min(at + XML_SLICE_BYTES, bytes.byteLength)), { stream: true }));
    }
    write(decoder.decode());
    parser.close();
  } catch (err) {
    if (!(err instanceof XmlStop)) throw err;
  }
  if (failure) throw new FileError("invalid_file", `The ${what} file is not well-formed XML (${failure}); it may have been cut off or damaged.`);
  if (!sawRoot) throw noRoot();
}

/** Unwinds the parser from inside its callbacks once the document is known to be bad. */
class XmlStop extends Error {}

/** Where a construct lies in a document's text, as character offsets: from its first character to after its last. */
type Span = { start: number; end: number };

/**
 * `text`, which begins `offset` characters into the document, with what of the DOCTYPE at `span`
 * it holds left out but for its line ends, so the lines sax counts in its errors stay right. sax
 * reads no DTD (it expands none of its entities, which is as this reader wants them), but it
 * does look for the DOCTYPE's end, and it loses track of it at a processing instruction in the
 * internal subset, which XML allows there (`<!DOCTYPE gpx [ <?app x?> ]>`): what followed the
 * instruction was text outside the root, and a well-formed file failed. The prolog scanner,
 * which found the root by the same DOCTYPE, knows where it ends.
 */
function withoutDoctype(text: string, offset: number, span: Span): string {
  const from = Math.max(0, span.start - offset);
  const to = Math.min(text.length, span.end - offset);
  if (from >= to) return text;
  return text.slice(0, from) + text.slice(from, to).replace(/[^\n]+/g, "") + text.slice(to);
}

/** How much of the file the root element is looked for in at a time. */
const SNIFF_SLICE_BYTES = 64 * 1024;

/** How much of the text from a `<` is enough to tell what it opens: "<!DOCTYPE", or the root element's name. */
const NAME_CHARS = 300;

/**
 * The local name of the root element (`gpx`, `TrainingCenterDatabase`), after a BOM, the XML
 * declaration, whitespace, comments, processing instructions and a DOCTYPE, however long they
 * are (a file is at most 25 MiB, and all of it may come before the root); null if the bytes do
 * not begin like an XML document. The bytes are decoded a slice at a time, as readXml reads
 * them, and each slice is scanned once (PrologScanner), so the time is linear in what precedes
 * the root and no more than a slice is held as text; bytes that are not XML are refused at their
 * first character, in the first slice.
 */
export function xmlRootName(bytes: Uint8Array): string | null {
  return scanProlog(bytes).root ?? null;
}

/**
 * xmlRootName looking no further than the first `maxBytes` (rounded up to a whole slice):
 * undefined when the prolog goes on past them, so a caller on a thread others wait on can have
 * the rest read elsewhere.
 */
export function xmlRootNameWithin(bytes: Uint8Array, maxBytes: number): string | null | undefined {
  return scanProlog(bytes, maxBytes).root;
}

/**
 * What precedes the root element (xmlRootName): the root's local name, or null, and where the
 * DOCTYPE is when the prolog holds one whole and the root follows (else null: two DOCTYPEs, or
 * one that never ends, are left for sax to refuse).
 */
function scanProlog(bytes: Uint8Array, maxBytes = Infinity): { root: string | null | undefined; doctype: Span | null } {
  const { decoder, skip } = decoderFor(bytes);
  const prolog = new PrologScanner();
  let root: string | null | undefined;
  for (let at = skip; at < bytes.byteLength && root === undefined; at += SNIFF_SLICE_BYTES) {
    if (at - skip >= maxBytes) return { root: undefined, doctype: null };
    root = prolog.scan(decoder.decode(bytes.subarray(at, Math.min(at + SNIFF_SLICE_BYTES, bytes.byteLength)), { stream: true }), false);
  }
  root ??= prolog.scan(decoder.decode(), true) ?? null;
  const doctype = root !== null && prolog.doctypes === 1 && prolog.doctype.end > prolog.doctype.start ? { ...prolog.doctype } : null;
  return { root, doctype };
}

/** XML's whitespace (what sax takes before the root), and a BOM the decoder left. */
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff;

/**
 * Reads what precedes the root element, text slice by text slice. What a slice ends in the middle
 * of (the `-->` a comment ends with, split between two slices; the start of a DOCTYPE) is kept
 * for the next, only as many characters as it takes: never the comment or DOCTYPE itself.
 */
class PrologScanner {
  /** What the scan is inside: between constructs, or in one, whose end it looks for. */
  private mode: "prolog" | "pi" | "comment" | "doctype" | "subsetPi" | "subsetComment" = "prolog";
  /** The characters of the last text not scanned yet. */
  private rest = "";
  /** In a DOCTYPE: the quote a literal is open with, and how many `[` (its internal subset) are open. */
  private quote = "";
  private depth = 0;
  /** How many characters of text the scan was given before, `rest` among them. */
  private seen = 0;
  /** The first DOCTYPE's span (its end 0 until it ends), and how many DOCTYPEs began. */
  readonly doctype: Span = { start: 0, end: 0 };
  doctypes = 0;

  /** The root's local name, null if the text is not XML, undefined while more text is needed (`end`: there is none). */
  scan(text: string, end: boolean): string | null | undefined {
    const s = this.rest + text;
    // Where `s` begins in the document's text.
    const base = this.seen - this.rest.length;
    this.seen += text.length;
    this.rest = "";
    let i = 0;
    const wait = (from: number) => {
      this.rest = s.slice(from);
      return undefined;
    };
    for (;;) {
      switch (this.mode) {
        case "prolog": {
          while (i < s.length && isSpace(s.charCodeAt(i))) i++;
          if (i === s.length) return end ? null : undefined;
          if (s[i] !== "<") return null;
          if (s.length - i < NAME_CHARS && !end) return wait(i);
          if (s.startsWith("<?", i)) {
            this.mode = "pi";
            i += 2;
          } else if (s.startsWith("<!--", i)) {
            this.mode = "comment";
            i += 4;
          } else if (s.startsWith("<!DOCTYPE", i)) {
            this.mode = "doctype";
            if (this.doctypes++ === 0) this.doctype.start = base + i;
            i += 9;
          } else {
            const m = /^<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)[\s/>]/.exec(s.slice(i, i + NAME_CHARS));
            if (!m) return null;
            const name = m[1]!;
            return name.includes(":") ? name.slice(name.indexOf(":") + 1) : name;
          }
          break;
        }
        case "pi":
        case "comment":
        case "subsetPi":
        case "subsetComment": {
          const close = this.mode === "pi" || this.mode === "subsetPi" ? "?>" : "-->";
          const at = s.indexOf(close, i);
          if (at < 0) return end ? null : wait(Math.max(i, s.length - (close.length - 1)));
          i = at + close.length;
          this.mode = this.mode === "pi" || this.mode === "comment" ? "prolog" : "doctype";
          break;
        }
        case "doctype": {
          // The internal subset in brackets may itself contain '>' characters, in literals and
          // in the comments and processing instructions it may hold.
          for (; i < s.length && this.mode === "doctype"; i++) {
            const c = s[i]!;
            if (this.quote) {
              if (c === this.quote) this.quote = "";
            } else if (c === '"' || c === "'") this.quote = c;
            else if (c === "[") this.depth++;
            else if (c === "]") this.depth--;
            else if (c === ">" && this.depth <= 0) {
              this.mode = "prolog";
              if (this.doctypes === 1) this.doctype.end = base + i + 1;
            } else if (c === "<" && this.depth > 0) {
              if (s.length - i < 4 && !end) return wait(i);
              if (s.startsWith("<!--", i)) {
                this.mode = "subsetComment";
                i += 3;
              } else if (s.startsWith("<?", i)) {
                this.mode = "subsetPi";
                i += 1;
              }
            }
          }
          if (this.mode === "doctype") return end ? null : undefined;
          break;
        }
      }
    }
  }
}

/** Longer than this, an element's text is no number a device wrote (a double has 17 significant digits). */
const NUMBER_CHARS = 64;

/**
 * A decimal number: each part of it can match in one way only, so a failed match costs time in
 * proportion to the text. (`\d+\.?\d*` could split a run of digits between its two parts in
 * every way, and 250,000 digits and an `x`, in 489 gzip-compressed bytes, held a file worker, and
 * every upload and export queued behind it, for its whole minute.)
 */
const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A number from an element's text; null when absent or not a finite number ("no", "undefined"). */
export function numberOf(text: string | null | undefined): number | null {
  if (text == null) return null;
  const t = text.trim();
  if (t.length > NUMBER_CHARS || !NUMBER_RE.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** ISO 8601's extended form (`2024-05-17T08:00:00Z`) and its basic one (`20240517T080000Z`); `t` and `z` as RFC 3339 allows; seconds may be left out. */
const TIME_RE = /^(\d{4})-?(\d{2})-?(\d{2})[Tt ](\d{2}):?(\d{2})(?::?(\d{2}))?(\.\d+)?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * An xsd:dateTime as Unix seconds. A time without a zone is read as UTC (GPX and TCX require
 * UTC), never in the server's local zone. Null when it is not a valid instant: fields that name
 * no real date or time (February 30th, 25 o'clock, minute 60, an offset past 14 hours) are not
 * rolled over into another day, since a reader that did so would place the sample wherever the
 * overflow lands; the point is then one without a time, as if its time were unreadable.
 * - `24:00:00` (its fraction, if any, zero) is the first instant of the next day, as XML Schema
 *   has it (1.0 second edition, 3.2.7.1: ISO 8601's end of a day); any other time in hour 24 is none.
 * - Second 60 is a leap second, which ISO 8601 and RFC 3339 allow and a receiver taking UTC from
 *   GPS writes: it is read only where one can be inserted, the last second of a UTC month (ITU-R
 *   TF.460), as the instant after :59 (Unix time counts no leap seconds), and is none elsewhere.
 * - Years are the years written: 0001 is year 1, not 1901 (Date.UTC's two-digit years), so a
 *   clock that was never set is named by the date it wrote.
 */
export function parseTime(text: string | null | undefined): number | null {
  const s = text?.trim();
  if (!s) return null;
  const m = TIME_RE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(sec ?? 0);
  const fraction = frac ? Number(`0${frac}`) : 0;
  if (month < 1 || month > 12 || day < 1 || minute > 59 || second > 60) return null;
  if (hour > 23 && !(hour === 24 && minute === 0 && second === 0 && fraction === 0)) return null;
  let offsetMin = 0;
  if (zone && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    const zoneHours = Number(digits.slice(0, 2));
    const zoneMinutes = Number(digits.slice(2) || "0");
    if (zoneMinutes > 59 || zoneHours * 60 + zoneMinutes > 14 * 60) return null;
    offsetMin = (zone[0] === "-" ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  }
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 0–99 as written.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  date.setUTCHours(hour, minute, Math.min(second, 59));
  let ms = date.getTime() - offsetMin * 60_000;
  if (second === 60) {
    // The last second of a UTC month is 23:59:59 on a day whose next is the 1st.
    const utc = new Date(ms);
    const lastOfMonth = new Date(ms + 1000).getUTCDate() === 1;
    if (!(utc.getUTCHours() === 23 && utc.getUTCMinutes() === 59 && lastOfMonth)) return null;
    ms += 1000;
  }
  ms += fraction * 1000;
  return Number.isFinite(ms) ? ms / 1000 : null;
}
