import { FileError, type ParsedActivity } from "../types";
import { LIMITS, SAMPLE_RANGE, SampleBudget, SampleBuilder, finishActivity, fullerLap, noActivityData, refusedTimesError, within, type Declared, type DeclaredLap } from "../sanity";
import { tcxSport } from "../sport";
import { numberOf, parseTime, readXml } from "../xml";

// TCX v2: one activity per <Activity>, also inside a <MultiSportSession>. Laps from <Lap> with
// their totals (TotalTimeSeconds is the lap's timer time, so the activity's moving time is their
// sum); trackpoints with Time, Position, AltitudeMeters, DistanceMeters, HeartRateBpm, Cadence
// and the ActivityExtension's TPX Speed, Watts and RunCadence. <Courses> are planned routes, not
// recordings, and are not read.

const KCAL_TO_J = 4184;
/** TCX's CadenceValue_t: an unsignedByte up to 254, within what any sample may hold. */
const TCX_CADENCE_RPM: readonly [number, number] = [SAMPLE_RANGE.cadenceRpm[0], Math.min(254, SAMPLE_RANGE.cadenceRpm[1])];

const bpmToHz = (v: number | null) => (v === null ? null : v / 60);

/** The elements of a <Lap> read for its totals, by their path below it. */
const LAP_FIELDS = new Set([
  "TotalTimeSeconds",
  "DistanceMeters",
  "MaximumSpeed",
  "Calories",
  "AverageHeartRateBpm/Value",
  "MaximumHeartRateBpm/Value",
  "Extensions/LX/AvgSpeed",
  "Extensions/LX/AvgWatts",
]);

/** The elements of a <Trackpoint> read for its sample, by their path below it. */
const POINT_FIELDS = new Set([
  "Time",
  "Position/LatitudeDegrees",
  "Position/LongitudeDegrees",
  "AltitudeMeters",
  "DistanceMeters",
  "HeartRateBpm/Value",
  "Cadence",
  "Extensions/TPX/RunCadence",
  "Extensions/TPX/Speed",
  "Extensions/TPX/Watts",
]);

/** An element's texts by path (the first of each), as a lap or a trackpoint is read. */
type Fields = Map<string, string>;
const num = (f: Fields, key: string) => numberOf(f.get(key));

function lapTotals(f: Fields): Declared {
  const calories = num(f, "Calories");
  return {
    movingTimeS: num(f, "TotalTimeSeconds"),
    distanceM: num(f, "DistanceMeters"),
    maxSpeedMps: num(f, "MaximumSpeed"),
    averageSpeedMps: num(f, "Extensions/LX/AvgSpeed"),
    averageHeartRateHz: bpmToHz(num(f, "AverageHeartRateBpm/Value")),
    maxHeartRateHz: bpmToHz(num(f, "MaximumHeartRateBpm/Value")),
    averagePowerW: num(f, "Extensions/LX/AvgWatts"),
    energyJ: calories === null ? null : calories * KCAL_TO_J,
  };
}

/** One <Activity> as it is read. */
type ActivityState = {
  depth: number;
  sport: string | undefined;
  notes: string | null;
  builder: SampleBuilder;
  laps: DeclaredLap[];
  /**
   * Laps that share a start are one lap (finishActivity keeps the fullest, fullerLap), and it
   * alone counts in the totals: per start, the lap kept so far and its place in `distinct`.
   */
  seenStarts: Map<number, { lap: DeclaredLap; at: number }>;
  distinct: Declared[];
};

const sum = (values: (number | null | undefined)[]) => {
  const present = values.filter((v): v is number => v != null);
  return present.length ? present.reduce((a, b) => a + b, 0) : null;
};
const maxOf = (values: (number | null | undefined)[]) => {
  let max: number | null = null;
  for (const v of values) if (v != null && (max === null || v > max)) max = v;
  return max;
};

export function parseTcx(content: Uint8Array): ParsedActivity[] {
  const budget = new SampleBudget();
  const activities: ParsedActivity[] = [];
  let found = 0;
  /**
   * Laps of the whole file, as a FIT file's are counted (parse-fit.ts): counted as they are read,
   * so the file is refused at the first lap past the limit, before the rest of a hostile file is
   * read and before anything works over every lap. Per activity, 100 activities of 10,000 laps
   * each made a 24 MB file of 300,000 laps, whose save held the server for seconds.
   */
  let lapsInFile = 0;
  let activity: ActivityState | null = null;
  let lap: { depth: number; startS: number | null; fields: Fields } | null = null;
  let point: { depth: number; fields: Fields } | null = null;
  /** Element names from the root down. */
  const path: string[] = [];
  /** Keeps the text of an element closing below `into`, if its path from there is one of `wanted` (the first of each). */
  const collect = (into: { depth: number; fields: Fields }, wanted: ReadonlySet<string>, name: string, text: string, depth: number) => {
    const key = depth === into.depth + 1 ? name : `${path.slice(into.depth, depth - 1).join("/")}/${name}`;
    if (wanted.has(key) && !into.fields.has(key)) into.fields.set(key, text);
  };

  const isActivity = (depth: number) =>
    (depth === 3 && path[1] === "Activities") ||
    (depth === 5 && path[1] === "Activities" && path[2] === "MultiSportSession" && (path[3] === "FirstSport" || path[3] === "NextSport"));

  readXml(content, "TCX", "TrainingCenterDatabase", {
    open(name, attrs, depth) {
      path.push(name);
      if (name === "Activity" && !activity && isActivity(depth)) {
        found++;
        activity = { depth, sport: attrs.Sport, notes: null, builder: new SampleBuilder(budget), laps: [], seenStarts: new Map(), distinct: [] };
      } else if (activity && name === "Lap" && depth === activity.depth + 1) {
        lap = { depth, startS: parseTime(attrs.StartTime), fields: new Map() };
      } else if (lap && name === "Track" && depth === lap.depth + 1) {
        if (activity!.builder.size > 0) activity!.builder.pause();
      } else if (lap && name === "Trackpoint" && depth === lap.depth + 2 && path[depth - 2] === "Track") {
        point = { depth, fields: new Map() };
      }
    },
    close(name, text, depth) {
      path.pop();
      if (point) {
        if (depth === point.depth) {
          pushPoint(activity!.builder, point.fields);
          point = null;
        } else collect(point, POINT_FIELDS, name, text, depth);
      } else if (lap) {
        if (depth === lap.depth) {
          if (++lapsInFile > LIMITS.lapsPerActivity) tooManyLaps();
          endLap(activity!, lap.startS, lapTotals(lap.fields));
          lap = null;
        } else collect(lap, LAP_FIELDS, name, text, depth);
      } else if (activity) {
        if (depth === activity.depth) {
          finish(activity);
          activity = null;
        } else if (depth === activity.depth + 1 && name === "Notes") activity.notes ??= text;
      }
    },
  });
  if (activities.length === 0) {
    if (found === 0) throw noActivityData("The TCX file holds no activity (it may hold only courses or workouts).");
    // Trackpoints whose times were all refused (a clock never set gives 1970) are not missing.
    throw refusedTimesError(budget) ?? noActivityData("The TCX file's activities hold no trackpoint with a time, so there is no activity to make.");
  }
  return activities;

  function finish(a: ActivityState) {
    const { builder, laps, distinct } = a;
    if (builder.size === 0) return;
    // DistanceMeters is required in a lap, so a writer with no distance to give (an indoor
    // activity without a speed sensor) puts 0 there: with no point carrying a distance or a
    // position, that 0 says "not recorded", and such a total is null, not 0 (CONTRACT §11).
    if (!builder.ch.distance_m.some((v) => v !== null) && !builder.latlng.some((p) => p !== null)) {
      for (const totals of [...distinct, ...laps.map((l) => l.totals)]) if (totals.distanceM === 0) totals.distanceM = null;
    }
    if (activities.length >= LIMITS.activitiesPerFile) {
      throw new FileError("invalid_file", `The TCX file holds more than ${LIMITS.activitiesPerFile} activities; at most ${LIMITS.activitiesPerFile} are read from one file.`);
    }
    // Strays at the ends first (finishActivity would, but the elapsed time below is read from the samples).
    builder.dropStrayEnds(LIMITS.elapsedS);
    const t0 = builder.t[0]!;
    const lastSample = builder.t[builder.size - 1]!;
    // TotalTimeSeconds is timer time; a lap's elapsed time runs to the next lap's start (laps
    // follow one another), the last one's to its last sample or its timer time, whichever is later.
    const starts = [...a.seenStarts.keys()].sort((x, y) => x - y);
    const nextStart = new Map(starts.map((s, i) => [s, starts[i + 1]]));
    for (const l of laps) {
      const next = nextStart.get(l.startS);
      const timerEnd = l.startS + (l.totals.movingTimeS ?? 0);
      l.totals.elapsedTimeS = (next ?? Math.max(lastSample, timerEnd)) - l.startS;
    }
    // Elapsed time spans the samples and the laps' own spans, whichever reaches further.
    const lapEnd = maxOf(laps.map((l) => (l.totals.movingTimeS != null ? l.startS + l.totals.movingTimeS : null)));
    const elapsed = Math.max(lastSample, lapEnd ?? lastSample) - t0;
    activities.push(
      finishActivity({
        sport: tcxSport(a.sport),
        name: a.notes,
        samples: builder,
        declared: {
          elapsedTimeS: elapsed,
          movingTimeS: sum(distinct.map((d) => d.movingTimeS)),
          distanceM: sum(distinct.map((d) => d.distanceM)),
          maxSpeedMps: maxOf(distinct.map((d) => d.maxSpeedMps)),
          averageSpeedMps: averageSpeedOfLaps(distinct),
          averageHeartRateHz: weightedByTime(distinct, "averageHeartRateHz"),
          maxHeartRateHz: maxOf(distinct.map((d) => d.maxHeartRateHz)),
          // A lap's average watts (its LX extension) over the laps, as its heart rate.
          averagePowerW: weightedByTime(distinct, "averagePowerW"),
          // TCX's schema requires a lap's Calories, so a writer that has none writes 0 (ours
          // too): laps that all say 0 recorded no energy, which is null (CONTRACT §11), not 0.
          energyJ: sum(distinct.map((d) => d.energyJ)) || null,
        },
        laps,
        ordinal: activities.length + 1,
      }),
    );
  }
}

function endLap(a: ActivityState, startS: number | null, totals: Declared) {
  if (startS === null) {
    a.distinct.push(totals);
    return;
  }
  const lap = { startS, totals: { ...totals } };
  a.laps.push(lap);
  const seen = a.seenStarts.get(startS);
  if (!seen) {
    a.seenStarts.set(startS, { lap, at: a.distinct.length });
    a.distinct.push(totals);
  } else if (fullerLap(seen.lap, lap)) {
    seen.lap = lap;
    a.distinct[seen.at] = totals;
  }
}

function tooManyLaps(): never {
  const n = LIMITS.lapsPerActivity.toLocaleString("en-US");
  throw new FileError("invalid_file", `The TCX file declares more than ${n} laps; at most ${n} are read from one file.`);
}

function pushPoint(builder: SampleBuilder, f: Fields) {
  const t = parseTime(f.get("Time"));
  if (t === null) {
    // Named if no trackpoint has a time (refusedTimesError).
    const text = f.get("Time");
    if (text?.trim()) builder.budget.unreadable(text);
    return;
  }
  builder.push({
    t,
    lat: num(f, "Position/LatitudeDegrees"),
    lng: num(f, "Position/LongitudeDegrees"),
    altitudeM: num(f, "AltitudeMeters"),
    distanceM: num(f, "DistanceMeters"),
    heartRateBpm: num(f, "HeartRateBpm/Value"),
    // The first cadence that can be one: an out-of-range <Cadence> (a writer's sentinel, a
    // sensor fault) would be left out of the sample anyway, and must not hide the RunCadence
    // beside it, as GPX's extension channels are chosen. TCX's cadence types stop at 254: 255 is
    // the byte's "no value", as in FIT, whose export would drop it.
    cadenceRpm: within(num(f, "Cadence"), TCX_CADENCE_RPM) ?? within(num(f, "Extensions/TPX/RunCadence"), TCX_CADENCE_RPM),
    speedMps: num(f, "Extensions/TPX/Speed"),
    powerW: num(f, "Extensions/TPX/Watts"),
  });
}

/**
 * The activity's average speed from its laps' own (their LX extension's `AvgSpeed`, CONTRACT
 * §11: speeds come from the file's lap totals where it has them): the distance over the time the
 * laps say it took them (each lap's distance at its own average). Null unless every lap that
 * covered distance states its average: the distance over the moving time is derived then.
 */
function averageSpeedOfLaps(laps: Declared[]): number | null {
  let distance = 0;
  let time = 0;
  for (const l of laps) {
    if (!l.distanceM) continue;
    if (!l.averageSpeedMps || !(l.averageSpeedMps > 0)) return null;
    distance += l.distanceM;
    time += l.distanceM / l.averageSpeedMps;
  }
  return time > 0 ? distance / time : null;
}

/** The average of `key` over the laps that state one, weighted by their time. */
function weightedByTime(laps: Declared[], key: "averageHeartRateHz" | "averagePowerW"): number | null {
  let total = 0;
  let time = 0;
  for (const l of laps) {
    const v = l[key];
    if (v == null) continue;
    const w = l.movingTimeS ?? 0;
    total += v * w;
    time += w;
  }
  return time > 0 ? total / time : null;
}
