import { FileError, type ParsedActivity } from "../types";
import { LIMITS, SampleBudget, SampleBuilder, finishActivity, noActivityData } from "../sanity";
import { gpxSport } from "../sport";
import { child, children, decodeEntities, decodeXml, numberOf, parseTime, parseXml, textOf } from "../xml";

// GPX 1.0 and 1.1: one activity per <trk> that has timed points. Positions from trkpt lat/lon,
// altitude from <ele>, heart rate, cadence and temperature from Garmin's TrackPointExtension
// (hr, cad, atemp) and the other common extension vocabularies, power from <power> (Strava) or
// <PowerInWatts>; whatever prefix the writer bound them to. Distance is the device's where the
// points carry one (Cluetrust's gpxdata:distance, as several tools write it), else the cumulative
// length of the track; each <trkseg> after the first starts after a pause. A point marked
// <fix>none</fix> (GPX: "the receiver had no fix") has no position, whatever its lat and lon say.

const ARRAYS = new Set(["trk", "trkseg", "trkpt", "extensions"]);

const EXT = {
  heartRate: new Set(["hr", "heartrate", "heart_rate", "heartratebpm"]),
  cadence: new Set(["cad", "cadence", "runcadence"]),
  temperature: new Set(["atemp", "temp", "temperature", "wtemp"]),
  power: new Set(["power", "watts", "powerinwatts"]),
  speed: new Set(["speed"]),
  distance: new Set(["distance"]),
};

/**
 * The share of timed points that must carry a distance for it to be the activity's: a few points
 * with one (a writer that puts it on some) would otherwise make a distance of a fraction of the
 * track, where measuring along all of it is right.
 */
const DISTANCE_COVERAGE = 0.9;

/** The first number in any of a point's <extensions> elements named as in `names`. */
function extension(exts: unknown[], names: Set<string>): number | null {
  for (const ext of exts) {
    const v = findNumber(ext, names);
    if (v !== null) return v;
  }
  return null;
}

/** The first number under `ext` (at most a few levels down) in an element named as in `names`. */
function findNumber(ext: unknown, names: Set<string>, depth = 0): number | null {
  if (!ext || typeof ext !== "object" || depth > 3) return null;
  for (const [key, value] of Object.entries(ext as Record<string, unknown>)) {
    if (key.startsWith("@_")) continue;
    if (names.has(key.toLowerCase())) {
      const v = numberOf(value) ?? numberOf(child(value, "Value"));
      if (v !== null) return v;
    }
  }
  for (const [key, value] of Object.entries(ext as Record<string, unknown>)) {
    if (key.startsWith("@_") || typeof value !== "object") continue;
    const v = findNumber(Array.isArray(value) ? value[0] : value, names, depth + 1);
    if (v !== null) return v;
  }
  return null;
}

const nameOf = (node: unknown): string | null => {
  const s = textOf(child(node, "name"));
  return s === null ? null : decodeEntities(s);
};

export function parseGpx(content: Uint8Array): ParsedActivity[] {
  const doc = parseXml(decodeXml(content), ARRAYS, "GPX");
  const gpx = child(doc, "gpx");
  if (!gpx || typeof gpx !== "object") throw new FileError("invalid_file", "The GPX file has no <gpx> element.");
  const fileName = nameOf(child(gpx, "metadata")) ?? nameOf(gpx);
  const tracks = children(gpx, "trk");
  const budget = new SampleBudget();
  const activities: ParsedActivity[] = [];
  for (const trk of tracks) {
    const builder = new SampleBuilder(budget);
    let timed = 0;
    let withDistance = 0;
    for (const seg of children(trk, "trkseg")) {
      if (builder.size > 0) builder.pause();
      for (const pt of children(seg, "trkpt")) {
        const t = parseTime(child(pt, "time"));
        // A point without a time is a route point, not a sample.
        if (t === null) continue;
        const attrs = pt as Record<string, unknown>;
        // Some writers (Strava) give a point two <extensions> elements: read them as one.
        const ext = children(pt, "extensions");
        const noFix = textOf(child(pt, "fix"))?.trim() === "none";
        const distanceM = extension(ext, EXT.distance);
        timed++;
        if (distanceM !== null) withDistance++;
        builder.push({
          t,
          lat: noFix ? null : numberOf(attrs["@_lat"]),
          lng: noFix ? null : numberOf(attrs["@_lon"]),
          distanceM,
          altitudeM: numberOf(child(pt, "ele")),
          speedMps: numberOf(child(pt, "speed")) ?? extension(ext, EXT.speed),
          heartRateBpm: extension(ext, EXT.heartRate),
          cadenceRpm: extension(ext, EXT.cadence),
          powerW: numberOf(child(pt, "power")) ?? extension(ext, EXT.power),
          temperatureC: extension(ext, EXT.temperature),
        });
      }
    }
    if (builder.size === 0) continue;
    if (withDistance < timed * DISTANCE_COVERAGE) builder.ch.distance_m.fill(null);
    if (activities.length >= LIMITS.activitiesPerFile) {
      throw new FileError("invalid_file", `The GPX file holds more than ${LIMITS.activitiesPerFile} tracks with times; at most ${LIMITS.activitiesPerFile} activities are read from one file.`);
    }
    activities.push(
      finishActivity({
        sport: gpxSport(textOf(child(trk, "type"))),
        name: nameOf(trk) ?? fileName,
        samples: builder,
        declared: {},
        laps: [],
        ordinal: activities.length + 1,
      }),
    );
  }
  if (activities.length === 0) {
    throw noActivityData(
      tracks.length === 0 ? "The GPX file holds no track (<trk>), only waypoints or routes." : "The GPX file's tracks hold no point with a time, so there is no activity to make.",
    );
  }
  return activities;
}
