import { FileError, type ParsedActivity } from "../types";
import { LIMITS, SampleBudget, SampleBuilder, finishActivity, noActivityData, type Declared, type DeclaredLap } from "../sanity";
import { tcxSport } from "../sport";
import { child, children, decodeEntities, decodeXml, numberOf, parseTime, parseXml, textOf } from "../xml";

// TCX v2: one activity per <Activity>, also inside a <MultiSportSession>. Laps from <Lap> with
// their totals (TotalTimeSeconds is the lap's timer time, so the activity's moving time is their
// sum); trackpoints with Time, Position, AltitudeMeters, DistanceMeters, HeartRateBpm, Cadence
// and the ActivityExtension's TPX Speed, Watts and RunCadence. <Courses> are planned routes, not
// recordings, and are not read.

const ARRAYS = new Set(["Activity", "Lap", "Track", "Trackpoint", "NextSport"]);
const KCAL_TO_J = 4184;

const bpmToHz = (v: number | null) => (v === null ? null : v / 60);

function activitiesOf(db: unknown): unknown[] {
  const container = child(db, "Activities");
  const out = [...children(container, "Activity")];
  const multi = child(container, "MultiSportSession");
  if (multi) {
    out.push(...children(child(multi, "FirstSport"), "Activity"));
    for (const next of children(multi, "NextSport")) out.push(...children(next, "Activity"));
  }
  return out;
}

function lapTotals(lap: unknown): Declared {
  const ext = child(child(lap, "Extensions"), "LX");
  const calories = numberOf(child(lap, "Calories"));
  return {
    movingTimeS: numberOf(child(lap, "TotalTimeSeconds")),
    distanceM: numberOf(child(lap, "DistanceMeters")),
    maxSpeedMps: numberOf(child(lap, "MaximumSpeed")),
    averageSpeedMps: numberOf(child(ext, "AvgSpeed")),
    averageHeartRateHz: bpmToHz(numberOf(child(child(lap, "AverageHeartRateBpm"), "Value"))),
    maxHeartRateHz: bpmToHz(numberOf(child(child(lap, "MaximumHeartRateBpm"), "Value"))),
    averagePowerW: numberOf(child(ext, "AvgWatts")),
    energyJ: calories === null ? null : calories * KCAL_TO_J,
  };
}

const sum = (values: (number | null | undefined)[]) => {
  const present = values.filter((v): v is number => v != null);
  return present.length ? present.reduce((a, b) => a + b, 0) : null;
};
const maxOf = (values: (number | null | undefined)[]) => {
  const present = values.filter((v): v is number => v != null);
  return present.length ? Math.max(...present) : null;
};

export function parseTcx(content: Uint8Array): ParsedActivity[] {
  const doc = parseXml(decodeXml(content), ARRAYS, "TCX");
  const db = child(doc, "TrainingCenterDatabase");
  if (!db || typeof db !== "object") throw new FileError("invalid_file", "The TCX file has no <TrainingCenterDatabase> element.");
  const budget = new SampleBudget();
  const activities: ParsedActivity[] = [];
  const all = activitiesOf(db);
  for (const activity of all) {
    const builder = new SampleBuilder(budget);
    const laps: DeclaredLap[] = [];
    const lapNodes = children(activity, "Lap");
    // A lap repeated with the same start (bad.tcx repeats its only lap) counts once in the totals.
    const seenStarts = new Set<number>();
    const distinct: Declared[] = [];
    for (const lap of lapNodes) {
      const startS = parseTime((lap as Record<string, unknown>)["@_StartTime"]);
      const totals = lapTotals(lap);
      if (startS !== null) {
        laps.push({ startS, totals: { ...totals } });
        if (!seenStarts.has(startS)) {
          seenStarts.add(startS);
          distinct.push(totals);
        }
      } else distinct.push(totals);
      for (const track of children(lap, "Track")) {
        if (builder.size > 0) builder.pause();
        for (const tp of children(track, "Trackpoint")) {
          const t = parseTime(child(tp, "Time"));
          if (t === null) continue;
          const pos = child(tp, "Position");
          const tpx = child(child(tp, "Extensions"), "TPX");
          builder.push({
            t,
            lat: numberOf(child(pos, "LatitudeDegrees")),
            lng: numberOf(child(pos, "LongitudeDegrees")),
            altitudeM: numberOf(child(tp, "AltitudeMeters")),
            distanceM: numberOf(child(tp, "DistanceMeters")),
            heartRateBpm: numberOf(child(child(tp, "HeartRateBpm"), "Value")),
            cadenceRpm: numberOf(child(tp, "Cadence")) ?? numberOf(child(tpx, "RunCadence")),
            speedMps: numberOf(child(tpx, "Speed")),
            powerW: numberOf(child(tpx, "Watts")),
          });
        }
      }
    }
    if (builder.size === 0) continue;
    // DistanceMeters is required in a lap, so a writer with no distance to give (an indoor
    // activity without a speed sensor) puts 0 there: with no point carrying a distance or a
    // position, that 0 says "not recorded", and such a total is null, not 0 (CONTRACT §11).
    if (!builder.ch.distance_m.some((v) => v !== null) && !builder.latlng.some((p) => p !== null)) {
      for (const totals of [...distinct, ...laps.map((l) => l.totals)]) if (totals.distanceM === 0) totals.distanceM = null;
    }
    if (activities.length >= LIMITS.activitiesPerFile) {
      throw new FileError("invalid_file", `The TCX file holds more than ${LIMITS.activitiesPerFile} activities; at most ${LIMITS.activitiesPerFile} are read from one file.`);
    }
    const t0 = builder.t[0]!;
    const lastSample = builder.t[builder.size - 1]!;
    // TotalTimeSeconds is timer time; a lap's elapsed time runs to the next lap's start (laps
    // follow one another), the last one's to its last sample or its timer time, whichever is later.
    const starts = [...new Set(laps.map((l) => l.startS))].sort((a, b) => a - b);
    for (const l of laps) {
      const next = starts.find((s) => s > l.startS);
      const timerEnd = l.startS + (l.totals.movingTimeS ?? 0);
      l.totals.elapsedTimeS = (next ?? Math.max(lastSample, timerEnd)) - l.startS;
    }
    // Elapsed time spans the samples and the laps' own spans, whichever reaches further.
    const lapEnd = maxOf(laps.map((l) => (l.totals.movingTimeS != null ? l.startS + l.totals.movingTimeS : null)));
    const elapsed = Math.max(lastSample, lapEnd ?? lastSample) - t0;
    const hrWeighted = weightedHeartRate(distinct);
    activities.push(
      finishActivity({
        sport: tcxSport((activity as Record<string, unknown>)["@_Sport"]),
        name: notes(activity),
        samples: builder,
        declared: {
          elapsedTimeS: elapsed,
          movingTimeS: sum(distinct.map((d) => d.movingTimeS)),
          distanceM: sum(distinct.map((d) => d.distanceM)),
          maxSpeedMps: maxOf(distinct.map((d) => d.maxSpeedMps)),
          averageHeartRateHz: hrWeighted,
          maxHeartRateHz: maxOf(distinct.map((d) => d.maxHeartRateHz)),
          energyJ: sum(distinct.map((d) => d.energyJ)),
        },
        laps,
        ordinal: activities.length + 1,
      }),
    );
  }
  if (activities.length === 0) {
    throw noActivityData(all.length === 0 ? "The TCX file holds no activity (it may hold only courses or workouts)." : "The TCX file's activities hold no trackpoint with a time, so there is no activity to make.");
  }
  return activities;
}

/** The average heart rate of the laps that state one, weighted by their time. */
function weightedHeartRate(laps: Declared[]): number | null {
  let total = 0;
  let time = 0;
  for (const l of laps) {
    if (l.averageHeartRateHz == null) continue;
    const w = l.movingTimeS ?? 0;
    total += l.averageHeartRateHz * w;
    time += w;
  }
  return time > 0 ? total / time : null;
}

function notes(activity: unknown): string | null {
  const s = textOf(child(activity, "Notes"));
  return s === null ? null : decodeEntities(s);
}
