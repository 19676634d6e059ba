import sax from "sax";
import { FileError } from "./types";

// GPX and TCX are read as a stream of elements (sax, in strict mode), never as a whole document:
// a 25 MiB file is decoded and parsed a slice at a time, and a reader keeps only what it is
// building (the samples, the element it is in). Set up for files nobody vouches for:
// - entities a DOCTYPE declares are never expanded (an entity bomb stays inert text, an external
//   entity is never fetched): a reference to one is kept as written; the predefined entities,
//   character references and HTML's named ones are decoded;
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
  /** An element opens: its name without a prefix, its attributes (names as written, values decoded), its depth (the root is 1). */
  open(name: string, attributes: Record<string, string>, depth: number): void;
  /** An element closes, with the text written directly in it since its last child (CDATA included). */
  close(name: string, text: string, depth: number): void;
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
 * over UTF-8 bytes, and such bytes are read as UTF-8.
 */
function decoderFor(bytes: Uint8Array): { decoder: TextDecoder; skip: number } {
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
  }
  return { decoder: new TextDecoder("utf-8"), skip: 0 };
}

/** The text of an XML file: BOM first, then the declared encoding, else UTF-8. */
export function decodeXml(bytes: Uint8Array): string {
  const { decoder, skip } = decoderFor(bytes);
  return decoder.decode(bytes.subarray(skip));
}

/**
 * Reads a GPX or TCX file (`what` names it in errors) element by element into `handler`, up to
 * the end of its root element, which must be named `root`. A document that is not well-formed,
 * has another root or nests deeper than MAX_XML_DEPTH is a FileError; so is an error the
 * handler throws as one. Only a slice of the file is ever held as text.
 */
export function readXml(bytes: Uint8Array, what: string, root: string, handler: XmlHandler): void {
  const noRoot = () => new FileError("invalid_file", `The ${what} file has no <${root}> element.`);
  let sawRoot = false;
  const parser = sax.parser(true, { trim: false, normalize: false, position: true });
  const names: string[] = [];
  let text = "";
  let failure: string | null = null;
  parser.onerror = (err) => {
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
    names.push(name);
    if (names.length === 1) {
      if (name !== root) throw noRoot();
      sawRoot = true;
    } else if (names.length > MAX_XML_DEPTH) {
      throw new FileError("invalid_file", `The ${what} file nests its elements more than ${MAX_XML_DEPTH} deep, which no ${what} file needs.`);
    }
    text = "";
    handler.open(name, tag.attributes as Record<string, string>, names.length);
  };
  parser.ontext = parser.oncdata = (t) => {
    text += t;
  };
  parser.onclosetag = () => {
    const depth = names.length;
    const name = names.pop()!;
    const inside = text;
    text = "";
    handler.close(name, inside, depth);
    // The root has closed: the document is read. What follows (the NUL padding or junk some
    // transfers leave after a file's end) is not looked at.
    if (depth === 1) throw new XmlStop();
  };
  const { decoder, skip } = decoderFor(bytes);
  try {
    for (let at = skip; at < bytes.byteLength; at += XML_SLICE_BYTES) {
      parser.write(decoder.decode(bytes.subarray(at, Math.min(at + XML_SLICE_BYTES, bytes.byteLength)), { stream: true }));
    }
    parser.write(decoder.decode());
    parser.close();
  } catch (err) {
    if (!(err instanceof XmlStop)) throw err;
  }
  if (failure) throw new FileError("invalid_file", `The ${what} file is not well-formed XML (${failure}); it may have been cut off or damaged.`);
  if (!sawRoot) throw noRoot();
}

/** Unwinds the parser from inside its callbacks once the document is known to be bad. */
class XmlStop extends Error {}

/** How far into the text the root element is looked for. */
const SNIFF_CHARS = 64 * 1024;

/**
 * The local name of the root element (`gpx`, `TrainingCenterDatabase`), after the XML
 * declaration, processing instructions, comments and a DOCTYPE; null if the text does not begin
 * like an XML document.
 */
export function xmlRootName(text: string): string | null {
  const s = text.length > SNIFF_CHARS ? text.slice(0, SNIFF_CHARS) : text;
  let i = s.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (s[i] !== "<") return null;
    if (s.startsWith("<?", i)) {
      const end = s.indexOf("?>", i + 2);
      if (end < 0) return null;
      i = end + 2;
    } else if (s.startsWith("<!--", i)) {
      const end = s.indexOf("-->", i + 4);
      if (end < 0) return null;
      i = end + 3;
    } else if (s.startsWith("<!DOCTYPE", i)) {
      // The internal subset in brackets may itself contain '>' characters.
      let j = i + 9;
      let depth = 0;
      let quote: string | null = null;
      for (; j < s.length; j++) {
        const c = s[j]!;
        if (quote) {
          if (c === quote) quote = null;
        } else if (c === '"' || c === "'") quote = c;
        else if (c === "[") depth++;
        else if (c === "]") depth--;
        else if (c === ">" && depth <= 0) break;
      }
      if (j >= s.length) return null;
      i = j + 1;
    } else {
      const m = /^<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)[\s/>]/.exec(s.slice(i, i + 300));
      if (!m) return null;
      const name = m[1]!;
      return name.includes(":") ? name.slice(name.indexOf(":") + 1) : name;
    }
  }
}

/** A number from an element's text; null when absent or not a finite number ("no", "undefined"). */
export function numberOf(text: string | null | undefined): number | null {
  if (text == null) return null;
  const t = text.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * An xsd:dateTime as Unix seconds. A time without a zone is read as UTC (GPX and TCX require
 * UTC), never in the server's local zone. Null when it is not a valid instant.
 */
export function parseTime(text: string | null | undefined): number | null {
  const s = text?.trim();
  if (!s) return null;
  const m = TIME_RE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(sec);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 60) return null;
  let ms = Date.UTC(Number(y), month - 1, day, hour, minute, second);
  if (frac) ms += Number(`0${frac}`) * 1000;
  if (zone && zone !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || "0");
    ms -= sign * offsetMin * 60_000;
  }
  return Number.isFinite(ms) ? ms / 1000 : null;
}
