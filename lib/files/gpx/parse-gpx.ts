import { FileError, type ParsedActivity } from "../types";
import { LIMITS, SAMPLE_RANGE, SampleBudget, SampleBuilder, finishActivity, noActivityData, refusedTimesError } from "../sanity";
import { gpxSport } from "../sport";
import { numberOf, parseTime, readXml } from "../xml";

// GPX 1.0 and 1.1: one activity per <trk> that has timed points. Positions from trkpt lat/lon,
// altitude from <ele>, heart rate, cadence and temperature from Garmin's TrackPointExtension
// (hr, cad, atemp) and the other common extension vocabularies, power from <power> (Strava) or
// <PowerInWatts>; whatever prefix the writer bound them to. Distance is the device's where the
// points carry one (Cluetrust's gpxdata:distance, as several tools write it), else the cumulative
// length of the track; each <trkseg> after the first starts after a pause. A point marked
// <fix>none</fix> (GPX: "the receiver had no fix") has no position, whatever its lat and lon say.

const EXT = {
  heartRate: new Set(["hr", "heartrate", "heart_rate", "heartratebpm"]),
  cadence: new Set(["cad", "cadence", "runcadence"]),
  temperature: new Set(["atemp", "temp", "temperature", "wtemp"]),
  power: new Set(["power", "watts", "powerinwatts"]),
  speed: new Set(["speed"]),
  distance: new Set(["distance"]),
};
/**
 * Elements a vocabulary names like a channel that are not that channel: OpenTracks writes, beside
 * Cluetrust's cumulative distance, `<opentracks:distance>`, the sensor's distance since the point
 * before (older versions wrote it alone); read as the distance, a 4.8 km ride was 8 m long.
 */
const NOT_CHANNELS: Record<string, ReadonlySet<string>> = {
  "http://opentracksapp.com/xmlschemas/v1": new Set(["distance"]),
};
type ExtChannel = keyof typeof EXT;
const EXT_CHANNELS = Object.keys(EXT) as ExtChannel[];

/** The range a channel's value must be in to be used (SampleBuilder leaves out any other). */
const EXT_RANGE: Record<ExtChannel, readonly [number, number]> = {
  heartRate: SAMPLE_RANGE.heartRateBpm,
  cadence: SAMPLE_RANGE.cadenceRpm,
  temperature: SAMPLE_RANGE.temperatureC,
  power: SAMPLE_RANGE.powerW,
  speed: SAMPLE_RANGE.speedMps,
  distance: SAMPLE_RANGE.distanceM,
};

/** `v` if it is a value the channel can have, else null. */
const usable = (c: ExtChannel, v: number | null): number | null => (v !== null && v >= EXT_RANGE[c][0] && v <= EXT_RANGE[c][1] ? v : null);

/** Where a <trkpt> is (gpx > trk > trkseg > trkpt), and its children, <extensions> among them. */
const POINT_DEPTH = 4;
const POINT_CHILD_DEPTH = POINT_DEPTH + 1;

/** How far below <extensions> a channel's element may sit (TrackPointExtension and the like nest it). */
const EXT_MAX_DEPTH = 4;

/**
 * The share of the points a distance could be measured along (those with a position; all timed
 * points where none has one) that must carry a distance for it to be the activity's: a few points
 * with one (a writer that puts it on some) would otherwise make a distance of a fraction of the
 * track, where measuring along all of it is right. Points without a fix do not count: measuring
 * cannot use them either (an open-water swim has a position only when the arm is out of the water).
 */
const DISTANCE_COVERAGE = 0.9;

/**
 * One <trkpt> as it is read. Its own children count once (the first of each); an extension
 * channel comes from the first <extensions> element that has it (Strava writes two) and there
 * from the shallowest element named for it, the first of those in the document. Only a value in
 * the channel's range (EXT_RANGE) is a candidate: one out of it would be left out of the sample
 * anyway, so a writer's own <heartrate>400</heartrate> beside Garmin's <hr>150</hr> must not
 * cost the point the heart rate it does have.
 */
class PointReader {
  lat: number | null = null;
  lng: number | null = null;
  time: string | null = null;
  fix: string | null = null;
  ele: string | null = null;
  speed: string | null = null;
  power: string | null = null;
  /** Per channel: its value and where it was found (which <extensions>, how deep), to keep the best. */
  private ext: Partial<Record<ExtChannel, { v: number; at: number; depth: number }>> = {};
  private extensions = 0;

  constructor(attrs: Record<string, string>) {
    this.lat = numberOf(attrs.lat);
    this.lng = numberOf(attrs.lon);
  }

  startExtensions() {
    this.extensions++;
  }

  /** A value element of `namespace` closed `depth` levels below an <extensions> (1: its child). */
  extensionValue(name: string, namespace: string, parent: string | undefined, text: string, depth: number) {
    let key = name.toLowerCase();
    if (NOT_CHANNELS[namespace]?.has(key)) return;
    let at = depth;
    // <hr><Value>150</Value></hr>: the value of its parent.
    if (key === "value" && parent !== undefined) {
      key = parent.toLowerCase();
      at = depth - 1;
    }
    if (at < 1 || at > EXT_MAX_DEPTH) return;
    const value = numberOf(text);
    if (value === null) return;
    for (const c of EXT_CHANNELS) {
      if (!EXT[c].has(key)) continue;
      const v = usable(c, value);
      if (v === null) continue;
      const best = this.ext[c];
      if (!best || this.extensions < best.at || (this.extensions === best.at && at < best.depth)) {
        this.ext[c] = { v, at: this.extensions, depth: at };
      }
    }
  }

  channel(c: ExtChannel): number | null {
    return this.ext[c]?.v ?? null;
  }
}

/** One <trk> as it is read: its samples, its name and type, and how many points carry a distance. */
type TrackState = { builder: SampleBuilder; name: string | null; type: string | null; timed: number; positioned: number; withDistance: number };

export function parseGpx(content: Uint8Array): ParsedActivity[] {
  const budget = new SampleBudget();
  const activities: ParsedActivity[] = [];
  let tracks = 0;
  let fileName: string | null = null;
  let metadataName: string | null = null;
  let trk: TrackState | null = null;
  let point: PointReader | null = null;
  /** Whether the reader is inside one of the point's <extensions>. */
  let inExtensions = false;
  /** Element names from the root down, for the parent and grandparent of what closes. */
  const path: string[] = [];

  const finishTrack = (t: TrackState) => {
    if (t.builder.size === 0) return;
    if (t.withDistance < (t.positioned > 0 ? t.positioned : t.timed) * DISTANCE_COVERAGE) t.builder.ch.distance_m.fill(null);
    if (activities.length >= LIMITS.activitiesPerFile) {
      throw new FileError("invalid_file", `The GPX file holds more than ${LIMITS.activitiesPerFile} tracks with times; at most ${LIMITS.activitiesPerFile} activities are read from one file.`);
    }
    activities.push(
      finishActivity({
        sport: gpxSport(t.type),
        name: t.name ?? metadataName ?? fileName,
        samples: t.builder,
        declared: {},
        laps: [],
        ordinal: activities.length + 1,
      }),
    );
  };

  const finishPoint = (pt: PointReader, t: TrackState) => {
    const time = parseTime(pt.time);
    // A point without a time is a route point, not a sample; one whose time cannot be read is
    // named if no point has a time (refusedTimesError).
    if (time === null) {
      if (pt.time?.trim()) budget.unreadable(pt.time);
      return;
    }
    const noFix = pt.fix?.trim() === "none";
    const distanceM = pt.channel("distance");
    t.timed++;
    if (!noFix && pt.lat !== null && pt.lng !== null) t.positioned++;
    if (distanceM !== null) t.withDistance++;
    t.builder.push({
      t: time,
      lat: noFix ? null : pt.lat,
      lng: noFix ? null : pt.lng,
      distanceM,
      altitudeM: numberOf(pt.ele),
      // The point's own <speed> and <power> come first, where they are usable.
      speedMps: usable("speed", numberOf(pt.speed)) ?? pt.channel("speed"),
      heartRateBpm: pt.channel("heartRate"),
      cadenceRpm: pt.channel("cadence"),
      powerW: usable("power", numberOf(pt.power)) ?? pt.channel("power"),
      temperatureC: pt.channel("temperature"),
    });
  };

  readXml(content, "GPX", "gpx", {
    open(name, attrs, depth) {
      path.push(name);
      if (depth === 2 && name === "trk") {
        tracks++;
        trk = { builder: new SampleBuilder(budget), name: null, type: null, timed: 0, positioned: 0, withDistance: 0 };
      } else if (trk && depth === 3 && name === "trkseg") {
        if (trk.builder.size > 0) trk.builder.pause();
      } else if (trk && depth === POINT_DEPTH && name === "trkpt" && path[2] === "trkseg") {
        point = new PointReader(attrs);
      } else if (point && depth === POINT_CHILD_DEPTH && name === "extensions") {
        point.startExtensions();
        inExtensions = true;
      }
    },
    close(name, text, depth, namespace) {
      path.pop();
      if (point) {
        const ext = POINT_CHILD_DEPTH; // the depth of <extensions>, as of the point's other children
        if (depth === POINT_DEPTH) {
          finishPoint(point, trk!);
          point = null;
          inExtensions = false;
        } else if (inExtensions && depth > ext) {
          point.extensionValue(name, namespace, depth > ext + 1 ? path[depth - 2] : undefined, text, depth - ext);
        } else if (inExtensions && depth === ext) {
          inExtensions = false;
        } else if (depth === ext) {
          if (name === "time") point.time ??= text;
          else if (name === "fix") point.fix ??= text;
          else if (name === "ele") point.ele ??= text;
          else if (name === "speed") point.speed ??= text;
          else if (name === "power") point.power ??= text;
        }
        return;
      }
      if (depth === 2 && name === "trk" && trk) {
        finishTrack(trk);
        trk = null;
      } else if (depth === 3 && trk && path[1] === "trk") {
        if (name === "name") trk.name ??= text;
        else if (name === "type") trk.type ??= text;
      } else if (depth === 2 && name === "name") {
        fileName ??= text;
      } else if (depth === 3 && name === "name" && path[1] === "metadata") {
        metadataName ??= text;
      }
    },
  });
  if (activities.length === 0) {
    if (tracks === 0) throw noActivityData("The GPX file holds no track (<trk>), only waypoints or routes.");
    // Points whose times were all refused (a clock never set gives 1970) are not missing.
    throw refusedTimesError(budget) ?? noActivityData("The GPX file's tracks hold no point with a time, so there is no activity to make.");
  }
  return activities;
}
