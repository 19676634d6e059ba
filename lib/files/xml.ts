import { XMLParser, XMLValidator } from "fast-xml-parser";
import { FileError } from "./types";

// GPX and TCX are read with fast-xml-parser, set up for files nobody vouches for:
// - entities are not expanded (processEntities off), so a DOCTYPE's entity bomb stays inert text;
//   the five predefined entities and character references are decoded here, only in the few
//   text values used as names;
// - namespace prefixes are removed, since writers choose their own (gpxtpx:, ns3:, ns2:, none);
// - values stay strings (parseTagValue off): numbers are parsed where a number is expected, and a
//   name such as "0x10" stays a name;
// - the elements a schema allows many of are always arrays, so one trackpoint reads like many;
// - nesting is bounded (maxNestedTags), and the document is checked for well-formedness first.

/** The text of an XML file: BOM first, then the declared encoding, else UTF-8. */
export function decodeXml(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder("utf-8").decode(bytes.subarray(3));
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 200));
  const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]?.toLowerCase();
  if (declared && declared !== "utf-8" && declared !== "utf8") {
    try {
      return new TextDecoder(declared).decode(bytes);
    } catch {
      // An encoding the platform does not know: read as UTF-8, which most such files really are.
    }
  }
  return new TextDecoder("utf-8").decode(bytes);
}

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

/** Parses a document whose elements named in `arrays` always come as arrays. */
export function parseXml(text: string, arrays: ReadonlySet<string>, what: string): Record<string, unknown> {
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: true });
  if (valid !== true) {
    const { msg, line } = valid.err;
    throw new FileError("invalid_file", `The ${what} file is not well-formed XML (line ${line}: ${msg.replace(/\.$/, "")}); it may have been cut off or damaged.`);
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: false,
    htmlEntities: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    maxNestedTags: 64,
    // Callbacks get a matcher rather than a path string built for every element: a quarter
    // faster on a 25 MiB GPX, and no callback here reads the path.
    jPath: false,
    isArray: (name, _path, _leaf, isAttribute) => !isAttribute && arrays.has(name),
  });
  try {
    const doc = parser.parse(text) as unknown;
    if (!doc || typeof doc !== "object") throw new Error("empty document");
    return doc as Record<string, unknown>;
  } catch (e) {
    throw new FileError("invalid_file", `The ${what} file could not be read as XML (${e instanceof Error ? e.message : "unknown error"}).`);
  }
}

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** The predefined entities and character references decoded; any other entity stays as written. */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return PREDEFINED[ref] ?? whole;
  });
}

/** The text of an element (a string, or an object with `#text` when it has attributes), or null. */
export function textOf(node: unknown): string | null {
  if (typeof node === "string") return node;
  if (typeof node === "number") return String(node);
  if (Array.isArray(node)) return textOf(node[0]);
  if (node && typeof node === "object" && "#text" in node) return textOf((node as Record<string, unknown>)["#text"]);
  return null;
}

/** A number from an element's text; null when absent or not a finite number ("no", "undefined"). */
export function numberOf(node: unknown): number | null {
  const s = textOf(node);
  if (s === null) return null;
  const t = s.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** A child element as an object (the first, if repeated), or undefined. */
export function child(node: unknown, name: string): unknown {
  if (!node || typeof node !== "object") return undefined;
  const v = (node as Record<string, unknown>)[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A child element that may repeat, always as an array. */
export function children(node: unknown, name: string): unknown[] {
  if (!node || typeof node !== "object") return [];
  const v = (node as Record<string, unknown>)[name];
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * An xsd:dateTime as Unix seconds. A time without a zone is read as UTC (GPX and TCX require
 * UTC), never in the server's local zone. Null when it is not a valid instant.
 */
export function parseTime(node: unknown): number | null {
  const s = textOf(node)?.trim();
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
