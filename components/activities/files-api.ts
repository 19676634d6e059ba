import type { z } from "zod";
import type { ActivityStreams, ExportFormat, Lap } from "@/lib/activities/file-schemas";

// Wire shapes of CONTRACT §11 as the console reads them through /api/console/**, from their schemas.

export type { UploadWire } from "@/lib/uploads/schemas";
export type StreamsWire = z.input<typeof ActivityStreams>;
export type LapWire = z.input<typeof Lap>;

// Keyed by the schema's formats, so a format added there fails to compile here until it has a label.
const EXPORT_LABELS: Record<z.output<typeof ExportFormat>, string> = { original: "Original file", fit: "FIT", gpx: "GPX", tcx: "TCX" };
export const EXPORT_FORMATS = (Object.keys(EXPORT_LABELS) as (keyof typeof EXPORT_LABELS)[]).map((format) => ({ format, label: EXPORT_LABELS[format] }));

const enc = encodeURIComponent;
export const consolePaths = {
  uploads: "/api/console/uploads",
  upload: (id: string) => `/api/console/uploads/${enc(id)}`,
  activity: (id: string) => `/api/console/activities/${enc(id)}`,
  streams: (id: string, resolution: StreamsWire["resolution"]) => `/api/console/activities/${enc(id)}/streams?resolution=${resolution}`,
  laps: (id: string) => `/api/console/activities/${enc(id)}/laps`,
  export: (id: string, format: keyof typeof EXPORT_LABELS) => `/api/console/activities/${enc(id)}/export?format=${format}`,
};

// The service's own limit, checked before sending a byte (CONTRACT §3: 413 over 25 MiB).
export { MAX_UPLOAD_BYTES } from "@/lib/uploads/schemas";

/**
 * The name a file answer asks to be saved under, from its `Content-Disposition`: `filename*`
 * first (RFC 8187: the exact name, percent-encoded UTF-8), else `filename` (RFC 6266 §4.3),
 * else null. Parameters are read one by one, quotes respected, so a `filename*=` written inside
 * a quoted `filename` (an activity may be named anything) is never taken for the real one.
 */
export function fileNameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const params = new Map<string, string>();
  const param = /\s*;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]*))\s*/y;
  param.lastIndex = header.search(/;|$/);
  for (let m = param.exec(header); m; m = param.exec(header)) {
    params.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!);
  }
  const extended = /^utf-8'[^']*'(.+)$/i.exec(params.get("filename*") ?? "");
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!);
    } catch {
      // Not valid percent-encoded UTF-8: the plain filename is the next best name.
    }
  }
  return params.get("filename") || null;
}
