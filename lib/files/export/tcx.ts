import type { Lap } from "../types";
import { afterStart, at, firstPointAtStart, isoTime, lapStartOffsetS, lastSampleOffsetS, num, perMinute, sampleTime, Utf8Out, xmlText } from "./common";
import type { ExportInput } from "./types";

/*
 * TCX v2 (TrainingCenterDatabasev2.xsd, elements in its sequence order) with Garmin's
 * ActivityExtension v2: TPX for each point's speed, watts and (a run's or a walk's) cadence, LX for each lap's average speed
 * and watts. A lap's TotalTimeSeconds is its timer (moving) time, as devices write it; its
 * points are the samples from its start to the next lap's. TCX has no temperature, and no
 * elapsed time but its points': an activity that ended after its last sample gets a last
 * point with only a time.
 */

const FOOT_SPORTS = new Set<ExportInput["sport"]>(["run", "trail_run", "walk", "hike"]);

const TCX_SPORT: Record<ExportInput["sport"], "Running" | "Biking" | "Other"> = {
  run: "Running",
  trail_run: "Running",
  ride: "Biking",
  virtual_ride: "Biking",
  swim: "Other",
  walk: "Other",
  hike: "Other",
  row: "Other",
  ski: "Other",
  strength: "Other",
  yoga: "Other",
  other: "Other",
};

const HEADER =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" ' +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
  'xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2" ' +
  'xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd ' +
  'http://www.garmin.com/xmlschemas/ActivityExtension/v2 http://www.garmin.com/xmlschemas/ActivityExtensionv2.xsd">\n';

/** Heart rate as TCX's HeartRateInBeatsPerMinute_t (1–255 bpm), or null. */
const bpm = (hz: number | null) => (hz == null || perMinute(hz) < 1 || perMinute(hz) > 255 ? null : perMinute(hz));

/**
 * Each lap's DistanceMeters as written. TCX has no distance of the activity's own: a reader
 * (this service's, Garmin's) adds up its laps'. A device's laps need not add up to its
 * session's distance (each rounded, or the last closed before the session ended: 10 laps of 1 km
 * and 247.4 m under a session of 10,248.7 m), so the last lap takes the difference, and the file
 * gives back the activity's distance (CONTRACT §11), to the centimetre it is written in.
 */
function lapDistancesAddingUp(laps: readonly Lap[], distanceM: number | null): string[] {
  const written = laps.map((l) => num(l.distanceM ?? 0, 2));
  if (distanceM == null || !laps.length) return written;
  const before = written.slice(0, -1).reduce((sum, d) => sum + Number(d), 0);
  const last = distanceM - before;
  if (last >= 0) written[written.length - 1] = num(last, 2);
  return written;
}

/** A TCX v2 document with the activity's laps, their totals and points, as UTF-8. */
export function exportTcx(activity: ExportInput): Uint8Array {
  const a = firstPointAtStart(activity);
  const { streams, totals } = a;
  // A run's or a walk's cadence is steps (of one foot, as devices count them) a minute, which TCX
  // keeps in the extension's RunCadence: its own Cadence is a crank's, and Garmin's tools and
  // Strava read a runner's there.
  const onFoot = FOOT_SPORTS.has(a.sport);
  const last = lastSampleOffsetS(a);
  const end = Math.max(totals.elapsedTimeS, last);
  const laps: Lap[] = a.laps.length ? a.laps : [{ ...totals, startOffsetS: 0, elapsedTimeS: Math.max(totals.elapsedTimeS, last) }];
  const timer = laps.reduce((s, l) => s + (l.movingTimeS ?? l.elapsedTimeS), 0);
  const lapDistances = lapDistancesAddingUp(laps, totals.distanceM);
  const kcal = totals.energyJ == null ? 0 : totals.energyJ / 4184;
  const { latlng, altitude_m, distance_m, heart_rate_hz, cadence_hz, speed_mps, power_w } = streams;

  const out = new Utf8Out();
  out.push(HEADER, ` <Activities>\n  <Activity Sport="${TCX_SPORT[a.sport]}">\n   <Id>${isoTime(a.startTime)}</Id>\n`);
  let i = 0;
  laps.forEach((lap, k) => {
    const lapTimer = lap.movingTimeS ?? lap.elapsedTimeS;
    const lapStart = afterStart(a, lapStartOffsetS(lap, a.firstSampleOffsetS));
    const hrAvg = bpm(lap.averageHeartRateHz);
    const hrMax = bpm(lap.maxHeartRateHz);
    out.push(`   <Lap StartTime="${isoTime(lapStart)}">\n`);
    out.push(`    <TotalTimeSeconds>${num(lapTimer, 3)}</TotalTimeSeconds>\n`);
    out.push(`    <DistanceMeters>${lapDistances[k]}</DistanceMeters>\n`);
    if (lap.maxSpeedMps != null) out.push(`    <MaximumSpeed>${num(lap.maxSpeedMps, 3)}</MaximumSpeed>\n`);
    out.push(`    <Calories>${Math.min(65535, Math.round(timer > 0 ? (kcal * lapTimer) / timer : 0))}</Calories>\n`);
    if (hrAvg != null) out.push(`    <AverageHeartRateBpm><Value>${hrAvg}</Value></AverageHeartRateBpm>\n`);
    if (hrMax != null) out.push(`    <MaximumHeartRateBpm><Value>${hrMax}</Value></MaximumHeartRateBpm>\n`);
    out.push(`    <Intensity>Active</Intensity>\n    <TriggerMethod>Manual</TriggerMethod>\n`);
    // A lap with no sample in its span (closed after the last record, or shorter than the
    // recording interval) has no Track: the schema's Track_t needs at least one Trackpoint.
    // Points are written as they are made, the Track opened before the first.
    let track = false;
    const point = (text: string) => {
      if (!track) out.push("    <Track>\n");
      track = true;
      out.push(text);
    };
    const next = laps[k + 1];
    for (; i < streams.size && (next === undefined || streams.time_s[i]! < next.startOffsetS); i++) {
      let pt = `     <Trackpoint><Time>${isoTime(sampleTime(a, i))}</Time>`;
      const p = latlng?.[i];
      if (p) pt += `<Position><LatitudeDegrees>${num(p[0], 7)}</LatitudeDegrees><LongitudeDegrees>${num(p[1], 7)}</LongitudeDegrees></Position>`;
      const alt = at(altitude_m, i);
      if (alt != null) pt += `<AltitudeMeters>${num(alt, 2)}</AltitudeMeters>`;
      const dist = at(distance_m, i);
      if (dist != null) pt += `<DistanceMeters>${num(dist, 2)}</DistanceMeters>`;
      const hr = bpm(at(heart_rate_hz, i));
      if (hr != null) pt += `<HeartRateBpm><Value>${hr}</Value></HeartRateBpm>`;
      const c = at(cadence_hz, i);
      const cad = c != null && perMinute(c) <= 254 ? perMinute(c) : null;
      if (cad != null && !onFoot) pt += `<Cadence>${cad}</Cadence>`;
      const speed = at(speed_mps, i);
      const watts = at(power_w, i);
      const runCadence = onFoot ? cad : null;
      if (speed != null || runCadence != null || watts != null) {
        // TrackpointExtension_t's order: Speed, RunCadence, Watts.
        pt += "<Extensions><ns3:TPX>";
        if (speed != null) pt += `<ns3:Speed>${num(speed, 3)}</ns3:Speed>`;
        if (runCadence != null) pt += `<ns3:RunCadence>${runCadence}</ns3:RunCadence>`;
        if (watts != null && watts >= 0 && watts <= 65535) pt += `<ns3:Watts>${Math.round(watts)}</ns3:Watts>`;
        pt += "</ns3:TPX></Extensions>";
      }
      point(`${pt}</Trackpoint>\n`);
    }
    if (k === laps.length - 1 && streams.size && end - last >= 1) {
      // The activity went on past its last sample (a session's own elapsed time): a point with
      // only a time says when it ended, as TCX has nowhere else to say it.
      point(`     <Trackpoint><Time>${isoTime(afterStart(a, end))}</Time></Trackpoint>\n`);
    }
    if (track) out.push("    </Track>\n");
    if (lap.averageSpeedMps != null || lap.averagePowerW != null) {
      out.push("    <Extensions><ns3:LX>");
      if (lap.averageSpeedMps != null) out.push(`<ns3:AvgSpeed>${num(lap.averageSpeedMps, 3)}</ns3:AvgSpeed>`);
      if (lap.averagePowerW != null) out.push(`<ns3:AvgWatts>${Math.round(lap.averagePowerW)}</ns3:AvgWatts>`);
      out.push("</ns3:LX></Extensions>\n");
    }
    out.push("   </Lap>\n");
  });
  if (a.name) out.push(`   <Notes>${xmlText(a.name)}</Notes>\n`);
  out.push("  </Activity>\n </Activities>\n</TrainingCenterDatabase>\n");
  return out.bytes();
}
