import { exportFit } from "./fit";
import { exportGpx } from "./gpx";
import { exportTcx } from "./tcx";
import type { ExportInput } from "./types";

export type { ExportInput } from "./types";
export { exportFit, exportGpx, exportTcx };

export const EXPORT_FORMATS = ["fit", "gpx", "tcx"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Content types of CONTRACT §11's export answers. */
export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  fit: "application/vnd.ant.fit",
  gpx: "application/gpx+xml",
  tcx: "application/vnd.garmin.tcx+xml",
};

/** A generated file as bytes. */
export function exportBytes(format: ExportFormat, a: ExportInput): Uint8Array {
  return format === "fit" ? exportFit(a) : format === "gpx" ? exportGpx(a) : exportTcx(a);
}

/** A generated file of the activity, as the export endpoint sends it. */
export function exportActivity(format: ExportFormat, a: ExportInput): { bytes: Uint8Array; contentType: string; extension: string } {
  return { bytes: exportBytes(format, a), contentType: EXPORT_CONTENT_TYPES[format], extension: format };
}
