import { Decoder, Stream } from "@garmin/fitsdk";
import { FileError, type ParsedActivity } from "../types";
import { LIMITS, SampleBudget, SampleBuilder, finishActivity, noActivityData, type Declared, type DeclaredLap } from "../sanity";
import { fitSport } from "../sport";
import { FIT_EPOCH_S, frameFit, profileFields } from "./frame";
import { isServiceApplicationId, SERVICE_DEVELOPER_FIELDS } from "../export/fit-messages";

type Mesg = Record<string, unknown>;

const SEMICIRCLE_TO_DEG = 180 / 2 ** 31;
const KCAL_TO_J = 4184;

/** A finite number, or null (fitsdk leaves invalid values out, and an array field is no sample). */
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
/**
 * A FIT date_time (seconds since 1989-12-31, as decoded with convertDateTimesToDates off) as Unix
 * seconds. Values below 0x10000000 are seconds since the device powered on (a device without a
 * clock fix, compressed-speed-distance.fit); they are kept: the samples' order and spacing are
 * right, and only the date is the device's guess.
 */
const unix = (v: unknown): number | null => {
  const n = num(v);
  return n === null || n < 0 ? null : n + FIT_EPOCH_S;
};
/**
 * A field's enhanced (wider) form, else its plain one: the same quantity, so a 0 in one where the
 * other has a value (a developer field stood in for the plain one only) is the missing one.
 */
const enhancedOr = (enhanced: unknown, plain: unknown): number | null => {
  const e = num(enhanced);
  const p = num(plain);
  return e === null || (e === 0 && p !== null) ? p : e;
};
const bpmToHz = (v: unknown) => {
  const n = num(v);
  return n === null ? null : n / 60;
};

/**
 * Decodes the messages, with the options that keep the work after decode cheap. Components are
 * expanded only where the reader needs them (`FramedFile.needsComponents`): elsewhere expansion only
 * copies speed and altitude into their enhanced fields, which the reader takes from either, and
 * was about a sixth of fitsdk's time for a file whose records carry them.
 */
function decode(bytes: Uint8Array, needsComponents: boolean): Record<string, Mesg[]> {
  const read = (mergeHeartRates: boolean) =>
    new Decoder(Stream.fromBuffer(bytes)).read({
      // fitsdk's messages are plain objects: read here, as everywhere after decode, as a Mesg.
      mesgListener: standInListener() as (mesgNum: number, m: object) => void,
      // Dates stay FIT epoch numbers: no Date object per record, plain arithmetic after.
      convertDateTimesToDates: false,
      // Components expand compressed speed/distance into speed and distance, and heart rate
      // messages' timestamps for the merge.
      expandComponents: needsComponents,
      expandSubFields: true,
      applyScaleAndOffset: true,
      convertTypesToStrings: true,
      includeUnknownData: false,
      mergeHeartRates,
    });
  let result = read(needsComponents);
  // Heart rate messages (HRM-Pro, swim) that do not follow the protocol's anchoring make the
  // merge throw; the records themselves are still good.
  if (result.errors.length > 0 && needsComponents) result = read(false);
  if (result.errors.length > 0) {
    const e = result.errors[0];
    const detail = e instanceof Error ? e.message.replace(/^FIT Runtime Error\s*/, "").trim() : "";
    throw new FileError("invalid_file", `The FIT file could not be decoded${detail ? ` (${detail})` : ""}: it is damaged or uses a structure this service does not read.`);
  }
  return result.messages as unknown as Record<string, Mesg[]>;
}

type Record_ = { t: number; m: Mesg };

/** The totals declaredTotals reads from a lap or session (their times are the device's own). */
const READ_TOTALS = ["totalDistance", "totalAscent", "totalFractionalAscent", "avgSpeed", "enhancedAvgSpeed", "maxSpeed", "enhancedMaxSpeed", "avgHeartRate", "maxHeartRate", "avgPower", "totalCalories"];

/** The fields the reader takes from each message a developer field may stand in for. */
const READ_FIELDS: Record<number, Set<string>> = {
  // record: what pushRecord reads
  20: new Set(["positionLat", "positionLong", "distance", "altitude", "enhancedAltitude", "speed", "enhancedSpeed", "heartRate", "cadence", "fractionalCadence", "power", "temperature"]),
  19: new Set(READ_TOTALS),
  // a session's, and its pool's length
  18: new Set([...READ_TOTALS, "poolLength"]),
};
const MESG_NAMES: Record<string, number> = { record: 20, lap: 19, session: 18 };

const FIELD_DESCRIPTION_MESG = 206;
const DEVELOPER_DATA_ID_MESG = 207;

/**
 * `own`: the description is this service's application's (its exact value of the native field).
 * `adds`: the value is added to the native field instead of replacing it (the service's
 * timestamp_ms, the milliseconds after a record's whole-second timestamp).
 */
type StandIn = { mesg: number; field: string; scale: number; offset: number; own: boolean; adds?: true };

const OWN_TIMESTAMP_MS = SERVICE_DEVELOPER_FIELDS.recordTimestampMs;
const OWN_DERIVED_AVG_SPEED = [SERVICE_DEVELOPER_FIELDS.sessionDerivedAvgSpeed, SERVICE_DEVELOPER_FIELDS.lapDerivedAvgSpeed];
/** Where a lap or session holds the service's derived_avg_speed once decoded: a name no native field has. */
const DERIVED_AVG_SPEED = "serviceDerivedAvgSpeed";

/**
 * The service's own fields that refine no native field, known by their field number within the
 * service's application (another application's field of that number or name is its own
 * business). timestamp_ms: a record's time is its timestamp plus that many milliseconds, which
 * orders the records that share a second. derived_avg_speed: a lap's or session's average speed
 * the service derived from distance and time, above its maximum (declaredTotals).
 */
function ownUnnamedField(description: Mesg): StandIn | null {
  const field = num(description.fieldDefinitionNumber);
  if (field === OWN_TIMESTAMP_MS.num) return { mesg: OWN_TIMESTAMP_MS.mesgNum, field: "timestamp", scale: 1000, offset: 0, own: true, adds: true };
  const derived = OWN_DERIVED_AVG_SPEED.find((f) => f.num === field);
  if (derived) return { mesg: derived.mesgNum, field: DERIVED_AVG_SPEED, scale: num(description.scale) || 1, offset: 0, own: true };
  return null;
}

/**
 * The field a developer field stands in for, if its description names one the reader takes
 * (native_mesg_num record, lap or session, and a native_field_num): a Stryd or Connect IQ power
 * field declares itself record field 7, power; a Connect IQ swimming app declares record
 * distance and speed, and lap and session total distance and average speed. The FIT protocol
 * makes such a field the native one's equivalent.
 */
function standInFor(description: Mesg, own: boolean): StandIn | null {
  const named = description.nativeMesgNum;
  const mesg = typeof named === "string" ? MESG_NAMES[named] : num(named);
  const native = num(description.nativeFieldNum);
  if (mesg == null || native === null || !READ_FIELDS[mesg]) return null;
  const field = profileFields(mesg)[native]?.name;
  if (!field || !READ_FIELDS[mesg]!.has(field)) return null;
  return { mesg, field, scale: num(description.scale) || 1, offset: num(description.offset) ?? 0, own };
}

/**
 * A listener for the decoder that, where a record, lap or session lacks a native field or gives
 * it as 0, fills it from the developer field that stands in for it (standInFor): a Connect IQ
 * pool swim's watch writes distance 0 in every record, lap and session, and the app the real
 * distance beside it. It works as the messages are decoded because fitsdk keys a message's
 * developer values by a number it gives each field description in turn, and starts counting
 * again when a developer is declared again (a multisport file does so per leg): which
 * description a key means is known only at the message's place in the file. fitsdk gives
 * developer values unscaled; the description's scale and offset apply.
 *
 * A description of this service's own application (its developer_data_id's application_id is
 * SERVICE_APPLICATION_ID, ../export/fit-messages.ts) is the exact value of the native field the
 * service's FIT export rounded (altitude to 0.2 m, a session's heart rate to whole bpm, …): its
 * value replaces the native one even where that is present and not 0; its timestamp_ms is added
 * to a record's timestamp, so the record is timed to the millisecond; its derived_avg_speed is
 * kept beside a lap's or session's native fields (ownUnnamedField). Which developer_data_index
 * is the service's is known from the developer_data_id messages as they come (an index declared
 * again for another application is no longer the service's).
 */
function standInListener(): (mesgNum: number, m: Mesg) => void {
  const byKey = new Map<number, StandIn>();
  const ownIndices = new Set<number>();
  // The same per message, rebuilt when a description changes it: a record allocates nothing.
  let active: Record<number, (StandIn & { key: number })[]> = {};
  return (mesgNum, m) => {
    const list = active[mesgNum];
    if (list) {
      const dev = m.developerFields as Record<number, unknown> | undefined;
      if (!dev) return;
      for (let i = 0; i < list.length; i++) {
        const s = list[i]!;
        const native = m[s.field];
        if (s.adds) {
          const v = num(dev[s.key]);
          if (v !== null && v >= 0 && v < s.scale && typeof native === "number") m[s.field] = native + v / s.scale;
          continue;
        }
        if (!s.own && native !== undefined && native !== 0) continue;
        const v = num(dev[s.key]);
        if (v !== null) m[s.field] = v / s.scale - s.offset;
      }
    } else if (mesgNum === FIELD_DESCRIPTION_MESG) {
      const key = num(m.key);
      if (key === null) return;
      const index = num(m.developerDataIndex);
      const own = index !== null && ownIndices.has(index);
      const s = (own ? ownUnnamedField(m) : null) ?? standInFor(m, own);
      if (s) byKey.set(key, s);
      else if (!byKey.delete(key)) return;
      active = {};
      for (const [k, v] of byKey) (active[v.mesg] ??= []).push({ ...v, key: k });
      // The service's own fields last: what another application filled in, they replace.
      for (const list of Object.values(active)) list.sort((a, b) => Number(a.own) - Number(b.own));
    } else if (mesgNum === DEVELOPER_DATA_ID_MESG) {
      const index = num(m.developerDataIndex);
      if (index === null) return;
      if (isServiceApplicationId(m.applicationId)) ownIndices.add(index);
      else ownIndices.delete(index);
    }
  };
}

/**
 * Samples made from a pool swim's lengths, for a swim whose records carry no time (the FR910XT
 * writes one untimed record per length) or that has no records at all (Garmin Swim writes only
 * lengths, laps and sessions). One sample at the end of each length (its start_time plus its
 * total_elapsed_time): the distance the pool lengths swum so far (an idle length, a rest at the
 * wall, adds none), the speed the length's average. Before them, one at the first length's
 * start, distance 0 and no speed: the samples, from which lap offsets count, then begin where
 * the swim and its first lap do. Without it they began a length late, and the first lap, which
 * keeps the elapsed time the file gives it, overlapped the second by that length.
 */
function lengthRecords(lengths: Mesg[] | undefined, poolLengthM: number | null): Record_[] {
  const out: Record_[] = [];
  let distance = 0;
  for (const l of lengths ?? []) {
    const start = unix(l.startTime);
    const elapsed = num(l.totalElapsedTime);
    const t = start !== null && elapsed !== null ? start + elapsed : unix(l.timestamp);
    if (t === null) continue;
    if (out.length === 0 && start !== null && elapsed !== null && start < t) out.push({ t: start, m: { distance: poolLengthM === null ? undefined : 0 } });
    const idle = l.lengthType === "idle";
    if (!idle && poolLengthM !== null) distance += poolLengthM;
    out.push({ t, m: { distance: poolLengthM === null ? undefined : distance, enhancedSpeed: idle ? undefined : (num(l.enhancedAvgSpeed) ?? num(l.avgSpeed) ?? undefined) } });
  }
  return out;
}

/** What a FIT file of a type other than `activity` holds, in words (file_id.type, as fitsdk names it). */
const FILE_TYPES: Record<string, string> = {
  course: "a course (a route to follow)",
  workout: "a workout (steps to follow)",
  schedules: "a training schedule",
  settings: "device settings",
  sport: "sport settings",
  totals: "lifetime totals",
  goals: "goals",
  bloodPressure: "blood pressure readings",
  weight: "weight scale readings",
  monitoringA: "all-day monitoring (steps, heart rate)",
  monitoringB: "all-day monitoring (steps, heart rate)",
  monitoringDaily: "all-day monitoring (steps, heart rate)",
  activitySummary: "an activity's summary without its samples",
  segment: "a segment",
  segmentList: "a list of segments",
  device: "device information",
};

function pushRecord(builder: SampleBuilder, r: Record_) {
  const m = r.m;
  const lat = num(m.positionLat);
  const lng = num(m.positionLong);
  const cadence = num(m.cadence);
  const fractional = num(m.fractionalCadence);
  builder.push({
    t: r.t,
    lat: lat === null ? null : lat * SEMICIRCLE_TO_DEG,
    lng: lng === null ? null : lng * SEMICIRCLE_TO_DEG,
    distanceM: num(m.distance),
    altitudeM: enhancedOr(m.enhancedAltitude, m.altitude),
    speedMps: enhancedOr(m.enhancedSpeed, m.speed),
    heartRateBpm: num(m.heartRate),
    cadenceRpm: cadence === null ? null : cadence + (fractional ?? 0),
    powerW: num(m.power),
    temperatureC: num(m.temperature),
  });
}

/** Instants (Unix seconds) at which the timer stopped: the samples after one start a new segment. */
function timerStops(events: Mesg[] | undefined): number[] {
  const stops: number[] = [];
  for (const e of events ?? []) {
    if (e.event !== "timer") continue;
    if (e.eventType !== "stop" && e.eventType !== "stopAll" && e.eventType !== "stopDisableAll") continue;
    const t = unix(e.timestamp);
    if (t !== null) stops.push(t);
  }
  return stops.sort((a, b) => a - b);
}

function declaredTotals(m: Mesg): Declared {
  const ascent = num(m.totalAscent);
  return {
    elapsedTimeS: num(m.totalElapsedTime),
    movingTimeS: num(m.totalTimerTime),
    distanceM: num(m.totalDistance),
    // Whole metres, and the fraction beside them where the writer gives it (this service's export does).
    elevationGainM: ascent === null ? null : Math.round((ascent + (num(m.totalFractionalAscent) ?? 0)) * 100) / 100,
    averageSpeedMps: enhancedOr(m.enhancedAvgSpeed, m.avgSpeed),
    // The service's own export's average derived above the maximum (../export/fit-messages.ts).
    derivedAverageSpeedMps: num(m[DERIVED_AVG_SPEED]),
    maxSpeedMps: enhancedOr(m.enhancedMaxSpeed, m.maxSpeed),
    averageHeartRateHz: bpmToHz(m.avgHeartRate),
    maxHeartRateHz: bpmToHz(m.maxHeartRate),
    averagePowerW: num(m.avgPower),
    energyJ: num(m.totalCalories) === null ? null : num(m.totalCalories)! * KCAL_TO_J,
  };
}

/**
 * The laps of the session that spans [from, to]: those its first_lap_index and num_laps name,
 * else those that start within it, its end excluded. A multisport file's legs follow one another
 * without a gap, so the next leg's first lap starts at this leg's end: it is not this leg's.
 * The indices are trusted only when the laps they name start within the session (chained files
 * each count their laps from 0, and a broken writer may count wrong).
 */
function declaredLaps(laps: Mesg[], session: Mesg | null, from: number, to: number): DeclaredLap[] {
  const lap = (l: Mesg, startS: number): DeclaredLap => {
    const totals = timesInOrder(declaredTotals(l), unix(l.startTime), unix(l.timestamp));
    return { startS, endS: unix(l.timestamp), totals };
  };
  const first = num(session?.firstLapIndex);
  const count = num(session?.numLaps);
  if (first !== null && count !== null && count > 0 && first + count <= laps.length) {
    const named = laps.slice(first, first + count);
    const starts = named.map(lapStart);
    if (starts.every((s) => s !== null && s >= from && s <= to)) return named.map((l, i) => lap(l, starts[i]!));
  }
  const out: DeclaredLap[] = [];
  for (const l of laps) {
    const start = lapStart(l);
    if (start === null || start < from || start >= to) continue;
    out.push(lap(l, start));
  }
  return out;
}

/** A lap's start: its start_time, else (a writer that leaves it out) its timestamp less its elapsed time. */
function lapStart(l: Mesg): number | null {
  const start = unix(l.startTime);
  if (start !== null) return start;
  const end = unix(l.timestamp);
  const elapsed = num(l.totalElapsedTime);
  return end !== null && elapsed !== null ? end - elapsed : null;
}

/** How far a session's closing timestamp may fall short of its start_time plus elapsed time (rounding, a writer's second) before the two contradict each other. */
const CONTRADICTED_SPAN_S = 60;

/**
 * A session's or lap's totals with its elapsed and timer times the right way round, where its
 * writer swapped them: a timer (moving) time longer than the elapsed time cannot be, and when the
 * span from start_time to the closing timestamp is that timer time, give or take a minute, the
 * two were written in each other's place (a Nielsen-Kellerman SpeedCoach wrote 2,839.6 s elapsed
 * and 21,680 s timer for a session whose timestamps are 21,680 s apart; read as written, 569 of
 * its 885 records fell outside it). `d` itself where they stand as written.
 */
function timesInOrder(d: Declared, start: number | null, end: number | null): Declared {
  const elapsed = d.elapsedTimeS;
  const timer = d.movingTimeS;
  if (elapsed == null || timer == null || start === null || end === null || !(timer > elapsed + 1)) return d;
  return Math.abs(end - start - timer) <= CONTRADICTED_SPAN_S ? { ...d, elapsedTimeS: timer, movingTimeS: elapsed } : d;
}

/**
 * Undoes a forward jump of the device's clock within a session, as a watch makes when it sets its
 * clock mid-activity (time-jump.fit, from Runalyze's tests: 8 minutes into a run its clock moved
 * 20 days ahead, and its session's closing timestamp, its later laps and records carry the new
 * clock). The session says how far: it closed `end - start - elapsed` seconds later than its
 * start_time and elapsed time allow. Where the records (in time order) hold one gap that long,
 * give or take the minute a pause or a dropped sample adds, everything after that gap up to the
 * session's close (records, timer stops, laps' starts and ends) is moved back by that much, and
 * the session keeps its start_time. Without it the session framed only the records before the
 * jump and the rest of the run was lost. A session of no elapsed time is not read this way: it
 * frames its records by other rules (parseFit).
 *
 * A gap that a timer stop opens is a pause, not a jump: the session's elapsed time was written
 * as its timer time (some writers give both the same), and its span is from its start_time to
 * its close. So are several such gaps that add up to the lateness. "pause" then, and nothing is
 * moved; "jump" where one was undone.
 */
function undoClockJump(
  records: Record_[],
  stops: number[],
  laps: Mesg[],
  { start, end, elapsed, timer, nextStart }: { start: number; end: number; elapsed: number; timer: number | null; nextStart: number | null },
): "jump" | "pause" | null {
  const jump = end - start - elapsed;
  const timerAsElapsed = timer !== null && Math.abs(timer - elapsed) <= 1;
  // Pauses may add up to less than the minute a lone gap must pass (two stops at traffic lights).
  if (!(elapsed > 0) || !(jump > (timerAsElapsed ? 1 : CONTRADICTED_SPAN_S))) return null;
  let lo = 0;
  while (lo < records.length && records[lo]!.t < start) lo++;
  let gapAt = -1;
  let gap = 0;
  // The time between records that a timer stop opens, less the step the records were taking
  // before it (a gap is the pause and one more sample's interval): pauses, however many.
  let paused = 0;
  let s = 0;
  for (let i = lo + 1; i < records.length && records[i]!.t <= end; i++) {
    const [from, to] = [records[i - 1]!.t, records[i]!.t];
    const g = to - from;
    while (s < stops.length && stops[s]! < from) s++;
    if (s < stops.length && stops[s]! < to) paused += g - (i - 2 >= lo ? Math.min(g, from - records[i - 2]!.t) : 0);
    if (g > gap) {
      gap = g;
      gapAt = i;
    }
  }
  // Three stops of 5 minutes in a session that closed 15 minutes late are as much a pause as one
  // of 15 minutes, where the session states its timer time as its elapsed time (a trainer app's
  // writer did, for both). One that states a real elapsed time (its timer shorter) and closed
  // late by what its pauses add up to is late for another reason (a clock jump): not this.
  if (timerAsElapsed && paused > 0 && Math.abs(paused - jump) <= Math.min(CONTRADICTED_SPAN_S, jump / 2)) return "pause";
  if (!(jump > CONTRADICTED_SPAN_S)) return null;
  if (gapAt < 0 || gap < jump || gap - jump > CONTRADICTED_SPAN_S) return null;
  const from = records[gapAt - 1]!.t;
  if (stops.some((t) => t >= from && t < records[gapAt]!.t)) return "pause";
  // What happens at the instant the session closed is its own, unless the next leg begins there
  // (a multisport file's legs follow one another without a gap): then it is the next leg's.
  const ownsEnd = nextStart === null || nextStart > end;
  const moved = (t: number) => t > from && (t < end || (t === end && ownsEnd));
  for (let i = gapAt; i < records.length && moved(records[i]!.t); i++) records[i]!.t -= jump;
  for (let i = 0; i < stops.length; i++) if (moved(stops[i]!)) stops[i]! -= jump;
  stops.sort((a, b) => a - b);
  for (const l of laps) {
    const started = unix(l.startTime);
    const ended = unix(l.timestamp);
    if (started !== null && moved(started)) l.startTime = (l.startTime as number) - jump;
    // A lap's end at the session's close is this session's whatever follows.
    if (ended !== null && ended > from && ended <= end) l.timestamp = (l.timestamp as number) - jump;
  }
  return "jump";
}

/**
 * Every activity of a FIT file: one per session, in order; a file of records without a session
 * gives one. A chained file's files are read one by one, each session framing only its own file's
 * records and laps (two files may cover the same hours: a watch's and a bike computer's, or a
 * pool swim whose samples are its lengths), and a file that holds no activity (a settings file
 * before or after one) adds none. `components: "always"` expands every component (what the
 * reader did before it learnt which it needs), for the tests that hold both readings equal.
 */
export function parseFit(content: Uint8Array, { components = "asNeeded" }: { components?: "asNeeded" | "always" } = {}): ParsedActivity[] {
  const framed = frameFit(content);
  const activities: ParsedActivity[] = [];
  const counts: ChainCounts = { records: 0, laps: 0, sessions: 0, samples: 0 };
  let refusal: FileError | null = null;
  for (const file of framed.files) {
    const messages = decode(file.bytes, components === "always" || file.needsComponents);
    try {
      activities.push(...activitiesOf(messages, counts, activities.length));
    } catch (e) {
      // A file of the chain without an activity: the chain fails for it only if no file has one.
      if (!(e instanceof FileError && e.code === "no_activity_data")) throw e;
      refusal ??= e;
    }
  }
  // With no activity anywhere, a damaged file chained after the rest is what the upload lost:
  // its damage is the answer (a workout file chained before a cut-off activity said "a workout").
  if (activities.length === 0) throw framed.damagedAfter ?? refusal!;
  return activities;
}

/** What the files of a chain read so far held: the limits hold for the upload, not for each file. */
type ChainCounts = { records: number; laps: number; sessions: number; samples: number };

/** The activities of one decoded FIT file; `before` activities came from the files before it. */
function activitiesOf(messages: Record<string, Mesg[]>, counts: ChainCounts, before: number): ParsedActivity[] {
  // Only an activity file records an activity: a course holds timed points too, but it is a
  // route to follow (as a TCX <Course> and a GPX <rte> are). A file that states no type is read.
  const fileType = messages.fileIdMesgs?.[0]?.type;
  if (fileType !== undefined && fileType !== "activity") {
    const what = typeof fileType === "string" ? FILE_TYPES[fileType] : undefined;
    throw noActivityData(`The FIT file holds ${what ?? `data of type "${String(fileType)}"`}, not a recorded activity.`);
  }

  const sessionMesgs = messages.sessionMesgs ?? [];
  const records: Record_[] = [];
  for (const m of messages.recordMesgs ?? []) {
    const t = unix(m.timestamp);
    if (t !== null) records.push({ t, m });
  }
  if (records.length === 0) {
    const poolLength = sessionMesgs.map((s) => num(s.poolLength)).find((v) => v !== null && v > 0) ?? null;
    for (const r of lengthRecords(messages.lengthMesgs, poolLength)) records.push(r);
  }
  if (records.length === 0) {
    throw noActivityData(
      sessionMesgs.length > 0 || (messages.lapMesgs?.length ?? 0) > 0
        ? "The FIT file holds an activity's totals but no timed samples (no record with a time), so there is no activity to make from it."
        : "The FIT file holds no timed samples (it is a settings, workout or other file, not a recorded activity).",
    );
  }
  counts.records += records.length;
  if (counts.records > LIMITS.samplesPerFile) {
    throw new FileError("invalid_file", `The FIT file holds more than ${LIMITS.samplesPerFile.toLocaleString("en-US")} samples, more than any real activity records.`);
  }
  const sorted = records.every((r, i) => i === 0 || r.t >= records[i - 1]!.t);
  const stops = timerStops(messages.eventMesgs);
  const budget = new SampleBudget();
  budget.used = counts.samples;
  const laps = messages.lapMesgs ?? [];
  counts.laps += laps.length;
  if (counts.laps > LIMITS.lapsPerActivity) {
    throw new FileError("invalid_file", `The FIT file holds ${counts.laps.toLocaleString("en-US")} laps; at most ${LIMITS.lapsPerActivity.toLocaleString("en-US")} are read from one file.`);
  }

  /** How many records are timed within [from, to] (Unix seconds). */
  const countWithin = (from: number, to: number) => {
    let n = 0;
    for (const r of records) if (r.t >= from && r.t <= to) n++;
    return n;
  };

  /**
   * Builds the samples within [from, to] (Unix seconds), in file order; within [from, to) where
   * `toExcluded`: a multisport file's next leg starts at `to`, and what was recorded at that
   * instant is the next leg's (its first sample), not this leg's too.
   */
  const collect = (from: number, to: number, toExcluded = false) => {
    const builder = new SampleBuilder(budget);
    let i = 0;
    if (sorted) {
      let lo = 0;
      let hi = records.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (records[mid]!.t < from) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    let s = 0;
    let lastT = -Infinity;
    for (; i < records.length; i++) {
      const r = records[i]!;
      if (r.t > to || (toExcluded && r.t === to)) {
        if (sorted) break;
        continue;
      }
      if (r.t < from) continue;
      while (s < stops.length && stops[s]! < lastT) s++;
      if (s < stops.length && stops[s]! >= lastT && stops[s]! < r.t && builder.size > 0) {
        builder.pause();
        s++;
      }
      pushRecord(builder, r);
      if (builder.size > 0) lastT = builder.t[builder.size - 1]!;
    }
    return builder;
  };

  /** The file's activities, once its samples count towards the chain's. */
  const counted = (out: ParsedActivity[]) => {
    counts.samples = budget.used;
    return out;
  };

  const sessions = sessionMesgs.filter((s) => unix(s.startTime) !== null || unix(s.timestamp) !== null);
  counts.sessions += sessions.length;
  if (counts.sessions > LIMITS.activitiesPerFile) {
    throw new FileError("invalid_file", `The FIT file holds ${counts.sessions} sessions; at most ${LIMITS.activitiesPerFile} activities are read from one file.`);
  }

  const sportMesgs = messages.sportMesgs ?? [];
  /**
   * The sport of the i-th session: its own, else (a session written without one) the sport
   * message's, the i-th where the file has one per session, else (a file without either) its
   * first lap's that names one.
   */
  const sportOf = (s: Mesg | undefined, i: number) => {
    if (s?.sport !== undefined) return fitSport(s.sport, s.subSport);
    const m = (sportMesgs.length > 1 ? sportMesgs[i] : undefined) ?? sportMesgs[0] ?? (s ? undefined : laps.find((l) => l.sport !== undefined));
    return fitSport(m?.sport, m?.subSport ?? s?.subSport);
  };

  /** One activity from every record, its totals computed: for a file whose sessions do not frame them. */
  const fromAllRecords = (session: Mesg | undefined): ParsedActivity[] => {
    const builder = collect(-Infinity, Infinity);
    return [
      finishActivity({
        sport: sportOf(session, 0),
        name: null,
        samples: builder,
        declared: {},
        laps: declaredLaps(laps, null, -Infinity, Infinity),
        ordinal: before + 1,
      }),
    ];
  };

  const activities: ParsedActivity[] = [];
  if (sessions.length === 0) return counted(fromAllRecords(undefined));

  /** Where the session before the current one ended: a session without a span of its own starts after it. */
  let previousEnd = -Infinity;
  /** How many of the records the sessions frame. */
  let framed = 0;
  for (const [i, s] of sessions.entries()) {
    const end = unix(s.timestamp);
    const startTime = unix(s.startTime);
    let declared = timesInOrder(declaredTotals(s), startTime, end);
    const elapsed = declared.elapsedTimeS ?? null;
    let start = startTime ?? (end !== null && elapsed !== null ? end - elapsed : end!);
    // The session's own span; without an elapsed time, up to its closing timestamp.
    let until = elapsed !== null ? start + elapsed : (end ?? Infinity);
    let startS: number | null = start;
    const next = sessions[i + 1];
    const nextStart = unix(next?.startTime);
    // A forward jump of the device's clock within the session is undone first: its span stands
    // as it states it (the rules below are for spans that contradict their records otherwise).
    const jumped = sorted && startTime !== null && end !== null && elapsed !== null ? undoClockJump(records, stops, laps, { start, end, elapsed, timer: declared.movingTimeS ?? null, nextStart }) : null;
    if (jumped === "pause") {
      // Its elapsed time is its timer time: the span is from its start_time to its close.
      until = end!;
      declared = { ...declared, elapsedTimeS: end! - start, movingTimeS: declared.movingTimeS ?? elapsed };
    } else if (
      startTime !== null && end !== null && end > previousEnd && end < until - CONTRADICTED_SPAN_S &&
      nextStart !== null && end <= nextStart + CONTRADICTED_SPAN_S && until > nextStart + CONTRADICTED_SPAN_S &&
      // The records agree with where it closed: at least half as many there as in the span claimed.
      2 * countWithin(previousEnd, end) >= countWithin(start, until)
    ) {
      // The span its start_time and elapsed time claim runs into the next session, and the
      // session closed (its timestamp) well before that span could have ended, in time for the
      // next one: its start_time is wrong (a Fenix 2 multisport file gives its first leg a
      // start_time 45 minutes late; its end, its first lap and its records agree with one
      // another, not with it). Its records are framed by where the session before it ended and
      // where it closed, its start and elapsed time are its samples'; its other totals stand.
      start = previousEnd;
      until = end;
      startS = null;
      declared = { ...declared, elapsedTimeS: null };
    } else if (
      startTime !== null && end !== null && end > start && end < until - CONTRADICTED_SPAN_S &&
      countWithin(start, end) > 0 && countWithin(end + CONTRADICTED_SPAN_S, until) === 0
    ) {
      // An elapsed time its own timestamps contradict: the session closed (its timestamp) long
      // before its start_time plus that elapsed time, and nothing was recorded after it closed
      // (a session of 600 records stating 20 days made a 20-day activity at 0.001 m/s). Its span
      // is from its start_time to its close, and a timer time longer than that span is computed
      // from its samples instead.
      until = end;
      declared = {
        ...declared,
        elapsedTimeS: end - start,
        movingTimeS: declared.movingTimeS != null && declared.movingTimeS > end - start + 1 ? null : declared.movingTimeS,
      };
    } else if (!(until > start)) {
      // A session that spans no time (written with only its closing timestamp, or an elapsed
      // time of 0) frames no activity: its records do. It takes those from its start_time (else
      // from where the session before it ended) up to its closing timestamp (else up to the next
      // session's start), and its elapsed and timer times are the samples', not the 0 it states.
      const nextBegins = nextStart ?? unix(next?.timestamp);
      start = startTime ?? previousEnd;
      until = end !== null && end > start ? end : nextBegins !== null && nextBegins > start ? nextBegins : Infinity;
      startS = startTime;
      declared = { ...declared, elapsedTimeS: null, movingTimeS: null };
    }
    previousEnd = until;
    const toExcluded = nextStart !== null && nextStart === until;
    const builder = collect(start, until, toExcluded);
    if (builder.size === 0) continue;
    framed += countWithin(start, toExcluded ? until - 1e-9 : until);
    activities.push(
      finishActivity({
        sport: sportOf(s, i),
        startS,
        name: null,
        samples: builder,
        declared,
        laps: declaredLaps(laps, s, start, until),
        ordinal: before + i + 1,
      }),
    );
  }
  // Sessions whose times frame none of the records, or fewer than half of them (a device that
  // wrote its session in local time, hours off its records' UTC, or with a start of 0), say
  // nothing reliable about where the activity is: the records do, all of them, rather than the
  // part the session happened to cover.
  if (activities.length > 0 && 2 * framed >= records.length) return counted(activities);
  budget.used = counts.samples;
  return counted(fromAllRecords(sessions[0]));
}
