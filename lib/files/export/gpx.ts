import { afterStart, at, firstPointAtStart, isoTime, lastSampleOffsetS, num, perMinute, sampleTime, Utf8Out, xmlText } from "./common";
import type { ExportInput } from "./types";

/*
 * GPX 1.1 with Garmin's TrackPointExtension v1 for heart rate, cadence and air temperature (its
 * schema's order: atemp, hr, cad), Garmin's PowerExtension v1 (its global PowerInWatts element)
 * for watts, and Cluetrust's gpxdata extension for each point's distance and speed, which GPX
 * itself lacks: without the device's distance a reader measures along the points, which is
 * short of a wheel's or a footpod's and counts the way across pauses (blue_hills.gpx: 15.4 km
 * becomes 16.2). Garmin's two are what Garmin Connect writes; gpxdata is what several other
 * tools write for what Garmin's lack, and a reader that knows none of them still has the points.
 *
 * A trkpt needs a position, yet a sample without one (before the first fix, in a tunnel) still
 * holds a time, heart rate, distance: leaving it out would move the start and the end and lose
 * its channels. Such a sample is written at the nearest known position (the last one, or the
 * first before any) and marked `<fix>none</fix>`, GPX's own word for "the receiver had no fix",
 * so a reader that heeds it (ours) reads no position there, and one that does not sees the
 * athlete stand still: no distance is made up either way.
 * An activity that went on past its last sample (a session's own elapsed time, a lap's timer)
 * ends with such a point at its end, carrying the activity's distance when that reaches further
 * than the samples' (a TCX lap's DistanceMeters): GPX has nowhere else to say when it ended.
 * An activity without any position (an indoor ride) has nothing a GPX point can stand on.
 * The track is one segment, pauses included: readers (ours too) leave the way between segments
 * out of a measured distance.
 */

/** Half the step an activity's stored distance is kept to (0.1 m): the most its rounding moves it (compared with 1 µm to spare for floating point). */
const TOTAL_ROUNDING_M = 0.05;

/** The GPX `type` for a sport type: words the import reads back (CONTRACT §11). */
const GPX_TYPE: Record<ExportInput["sport"], string> = {
  run: "running",
  trail_run: "running",
  ride: "cycling",
  virtual_ride: "cycling",
  swim: "swimming",
  walk: "walking",
  hike: "hiking",
  row: "rowing",
  ski: "skiing",
  strength: "strength_training",
  yoga: "yoga",
  other: "other",
};

const NAMESPACES =
  'xmlns="http://www.topografix.com/GPX/1/1" ' +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
  'xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" ' +
  'xmlns:gpxpx="http://www.garmin.com/xmlschemas/PowerExtension/v1" ' +
  'xmlns:gpxdata="http://www.cluetrust.com/XML/GPXDATA/1/0" ' +
  'xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd ' +
  "http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www8.garmin.com/xmlschemas/TrackPointExtensionv1.xsd " +
  "http://www.garmin.com/xmlschemas/PowerExtension/v1 http://www8.garmin.com/xmlschemas/PowerExtensionv1.xsd " +
  'http://www.cluetrust.com/XML/GPXDATA/1/0 http://www.cluetrust.com/Schemas/gpxdata10.xsd"';

/** A GPX 1.1 document of the activity's track, as UTF-8. */
export function exportGpx(activity: ExportInput): Uint8Array {
  const a = firstPointAtStart(activity);
  const { streams, totals } = a;
  const name = xmlText(a.name);
  const out = new Utf8Out();
  out.push(
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    `<gpx version="1.1" creator="Athlete Activity Service" ${NAMESPACES}>\n`,
    ` <metadata><name>${name}</name><time>${isoTime(a.startTime)}</time></metadata>\n`,
    ` <trk>\n  <name>${name}</name>\n  <type>${GPX_TYPE[a.sport]}</type>\n  <trkseg>\n`,
  );
  const { latlng, altitude_m, distance_m, speed_mps, heart_rate_hz, cadence_hz, power_w, temperature_c } = streams;
  const firstFix = latlng ? latlng.findIndex((p) => p != null) : -1;
  if (firstFix >= 0) {
    let known = latlng![firstFix]!;
    let firstDistance: number | null = null;
    let lastDistance: number | null = null;
    for (let i = 0; i < streams.size; i++) {
      const p = latlng![i];
      if (p) known = p;
      const dist = at(distance_m, i);
      if (dist != null) {
        firstDistance ??= dist;
        lastDistance = dist;
      }
      out.push(
        point(known, !p, sampleTime(a, i), {
          ele: at(altitude_m, i),
          atemp: at(temperature_c, i),
          hr: at(heart_rate_hz, i),
          cad: at(cadence_hz, i),
          watts: at(power_w, i),
          dist,
          speed: at(speed_mps, i),
        }),
      );
    }
    const last = lastSampleOffsetS(a);
    const endDistance = totals.distanceM == null ? null : (firstDistance ?? 0) + totals.distanceM;
    // The stored total is kept to 0.1 m (lib/db/schema/measure.ts): a gap it rounding explains
    // is no distance to add, and a point a second later would lengthen the activity read back.
    const further = endDistance != null && lastDistance != null && endDistance - lastDistance > TOTAL_ROUNDING_M + 1e-6;
    if (totals.elapsedTimeS - last >= 1 || further) {
      // The end of the activity, a millisecond after the last sample at the least: a point at the
      // same instant would be merged into that sample by a reader, its distance lost. When only
      // the distance reaches further, the elapsed time read back stays what it was (the importer
      // keeps it in whole seconds); a second later, as until 2026-12-03, made it a second longer.
      const end = Math.max(totals.elapsedTimeS, last + 0.001);
      out.push(point(known, true, afterStart(a, end), { dist: further ? endDistance : null }));
    }
  }
  out.push("  </trkseg>\n </trk>\n</gpx>\n");
  return out.bytes();
}

type PointValues = Partial<Record<"ele" | "atemp" | "hr" | "cad" | "watts" | "dist" | "speed", number | null>>;

/** One trkpt, its elements in the schema's order (ele, time, fix, extensions). */
function point(p: [number, number], noFix: boolean, time: Date, v: PointValues): string {
  let pt = `   <trkpt lat="${num(p[0], 7)}" lon="${num(p[1], 7)}">`;
  if (v.ele != null) pt += `<ele>${num(v.ele, 2)}</ele>`;
  pt += `<time>${isoTime(time)}</time>`;
  if (noFix) pt += "<fix>none</fix>";
  let tpx = "";
  if (v.atemp != null) tpx += `<gpxtpx:atemp>${num(v.atemp, 1)}</gpxtpx:atemp>`;
  if (v.hr != null && perMinute(v.hr) >= 1 && perMinute(v.hr) <= 255) tpx += `<gpxtpx:hr>${perMinute(v.hr)}</gpxtpx:hr>`;
  if (v.cad != null && perMinute(v.cad) <= 254) tpx += `<gpxtpx:cad>${perMinute(v.cad)}</gpxtpx:cad>`;
  let ext = "";
  if (v.watts != null) ext += `<gpxpx:PowerInWatts>${Math.round(v.watts)}</gpxpx:PowerInWatts>`;
  if (tpx) ext += `<gpxtpx:TrackPointExtension>${tpx}</gpxtpx:TrackPointExtension>`;
  if (v.dist != null) ext += `<gpxdata:distance>${num(v.dist, 2)}</gpxdata:distance>`;
  if (v.speed != null) ext += `<gpxdata:speed>${num(v.speed, 3)}</gpxdata:speed>`;
  if (ext) pt += `<extensions>${ext}</extensions>`;
  return `${pt}</trkpt>\n`;
}
