import { parseFit } from "./fit/parse-fit";
import { parseGpx } from "./gpx/parse-gpx";
import { parseTcx } from "./tcx/parse-tcx";
import { FileError, type FileKind, type ParsedActivity } from "./types";

const PARSERS: Record<FileKind, (content: Uint8Array) => ParsedActivity[]> = {
  fit: parseFit,
  gpx: parseGpx,
  tcx: parseTcx,
};

/**
 * Every activity in the file, in order (a multisport FIT file: one per session). Synchronous and
 * pure. Throws only FileError (`invalid_file` or `no_activity_data`) with a message a person
 * understands: whatever else a library throws on a malformed file becomes `invalid_file`.
 */
export function parseActivityFile(content: Uint8Array, kind: FileKind): ParsedActivity[] {
  const parse = PARSERS[kind];
  if (!parse) throw new FileError("invalid_file", "The file is not a FIT, GPX or TCX file.");
  try {
    return parse(content);
  } catch (e) {
    if (e instanceof FileError) throw e;
    // A stack overflow or an allocation failure on a hostile file is still the file's fault.
    const detail = e instanceof Error && e.message ? ` (${e.message.slice(0, 200)})` : "";
    throw new FileError("invalid_file", `The ${kind.toUpperCase()} file could not be read${detail}: it is damaged or not a valid ${kind.toUpperCase()} file.`);
  }
}
