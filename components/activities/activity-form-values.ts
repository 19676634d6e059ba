// Between the activity form (text in the athlete's units) and the API (SI numbers).
import type { z } from "zod";
import { ORDERED_PAIRS, type ActivityWire, type CreateActivityInput, type OrderedPair } from "@/lib/activities/schemas";
import { distanceUnit } from "./chart-series";
import type { SportType } from "./sport";
import {
  bpmToHz,
  formatDuration,
  fromElevationMeters,
  fromMps,
  hzToBpm,
  inputNumber,
  joulesToKcal,
  kcalToJoules,
  parseDuration,
  toElevationMeters,
  toMps,
  UNIT_LABELS,
  type Units,
} from "./units";

export type FormValues = {
  name: string;
  sport_type: SportType;
  date: string;
  time: string;
  duration: string;
  moving_time: string;
  distance: string;
  elevation: string;
  max_speed: string;
  avg_hr: string;
  max_hr: string;
  power: string;
  energy: string;
};
export type FormField = keyof FormValues;
export type FormErrors = Partial<Record<FormField, string>>;

/** A field the API takes in a create (CreateActivityInput, the wire's input). */
export type WireInputField = keyof z.input<typeof CreateActivityInput>;

/**
 * What the form sends: CreateActivityInput's fields, every measurement explicit but the average
 * speed, which the API derives from distance and time (on a change too, when either moves): so
 * a distance corrected by hand is not held to a maximum speed the device measured. Read from the
 * schema, so a field added to it fails the typecheck in readForm (which must send it) and in
 * FIELD_OF (which must place its errors) until the form has a field for it (FormValues).
 */
export type ActivityInput = { [K in Exclude<WireInputField, "average_speed_mps">]-?: Exclude<z.input<typeof CreateActivityInput>[K], undefined> };

/** Which form field shows an API error about a wire field: every field the API takes. */
export const FIELD_OF: Record<WireInputField, FormField> = {
  name: "name",
  sport_type: "sport_type",
  start_local: "date",
  elapsed_time_s: "duration",
  moving_time_s: "moving_time",
  distance_m: "distance",
  elevation_gain_m: "elevation",
  average_speed_mps: "distance",
  max_speed_mps: "max_speed",
  average_heart_rate_hz: "avg_hr",
  max_heart_rate_hz: "max_hr",
  average_power_w: "power",
  energy_j: "energy",
};

/**
 * A limit in the form's units, rounded toward what the limit allows (down for an upper limit, up
 * for a lower one), so the number said is one the form takes: 23,900.6 kcal at most reads
 * "at most 23900 kcal", not 23901, which is over it.
 */
function limitNumber(n: number, digits: number, toward: "down" | "up"): string {
  const f = 10 ** digits;
  // A limit that converts to a round number up to floating-point noise (5 Hz = 300 bpm) stays it.
  const r = toward === "down" ? Math.floor(n * f + 1e-9) / f : Math.ceil(n * f - 1e-9) / f;
  return inputNumber(r, digits);
}

// How each form field shows an SI limit from an API message, in the athlete's units (the
// distance in the sport's: metres or yards for a swim).
type Show = (si: number, units: Units, sport: SportType, toward: "down" | "up") => string;
const SHOW: Partial<Record<FormField, Show>> = {
  duration: (s) => formatDuration(s),
  moving_time: (s) => formatDuration(s),
  distance: (m, u, sport, toward) => {
    const unit = distanceUnit(sport, u);
    return `${limitNumber(unit.fromMeters(m), Math.min(unit.inputDigits, 1), toward)} ${unit.label}`;
  },
  elevation: (m, u, _s, toward) => `${limitNumber(fromElevationMeters(m, u), 0, toward)} ${UNIT_LABELS[u].elevation}`,
  max_speed: (v, u, _s, toward) => `${limitNumber(fromMps(v, u), 1, toward)} ${UNIT_LABELS[u].speed}`,
  avg_hr: (hz, _u, _s, toward) => `${limitNumber(hzToBpm(hz), 0, toward)} bpm`,
  max_hr: (hz, _u, _s, toward) => `${limitNumber(hzToBpm(hz), 0, toward)} bpm`,
  power: (w, _u, _s, toward) => `${limitNumber(w, 0, toward)} W`,
  energy: (j, _u, _s, toward) => `${limitNumber(joulesToKcal(j), 0, toward)} kcal`,
};
const BOUND = /^Too (?:big|small): expected number to be ([<>]=?)(-?[\d.]+(?:e[+-]?\d+)?)$/;
/**
 * A pair's rule (ORDERED_PAIRS), in the form's own words, for the member the API names (the one
 * a change sent, or the pair's `field` when it sent both): the API's words name the wire fields.
 */
const PAIR_WORDS: Record<OrderedPair["lower"] | OrderedPair["upper"], string> = {
  moving_time_s: "Must be no longer than the duration.",
  elapsed_time_s: "Must be at least the moving time.",
  average_speed_mps: "Gives an average speed above the max speed.",
  max_speed_mps: "Must be at least the average speed.",
  average_heart_rate_hz: "Must be at most the max heart rate.",
  max_heart_rate_hz: "Must be at least the average heart rate.",
};
const pairBroken = (wire: string, detail: string) =>
  ORDERED_PAIRS.some((p) => (p.lower === wire || p.upper === wire) && detail.startsWith(p.rule)) ? (wire as keyof typeof PAIR_WORDS) : undefined;
/** The average speed the API derives from distance and time, over its bound (createActivity's derivedAverageSpeed). */
const DERIVED_TOO_FAST = /^distance_m over (?:moving|elapsed)_time_s is .* above the ([\d.]+) m\/s/;
const BOUND_WORDS = { "<=": "at most", "<": "less than", ">=": "at least", ">": "more than" } as const;

/**
 * The API's field errors, moved onto the form's fields. A range error names its limit in SI
 * units (`<=5` Hz); the athlete typed bpm, so the limit is shown in bpm.
 */
export function formErrorsFromApi(fields: Record<string, string>, units: Units, sport: SportType): FormErrors {
  const out: FormErrors = {};
  for (const [wire, detail] of Object.entries(fields)) {
    const field = FIELD_OF[wire as WireInputField];
    if (!field || out[field]) continue;
    const bound = BOUND.exec(detail);
    const show = SHOW[field];
    const pair = pairBroken(wire, detail);
    const tooFast = DERIVED_TOO_FAST.exec(detail);
    out[field] =
      bound && show && wire !== "average_speed_mps"
        ? `Must be ${BOUND_WORDS[bound[1] as keyof typeof BOUND_WORDS]} ${show(Number(bound[2]), units, sport, bound[1]!.startsWith("<") ? "down" : "up")}.`
        : pair
          ? PAIR_WORDS[pair]
          : tooFast
            ? `Gives an average speed over ${SHOW.max_speed!(Number(tooFast[1]), units, sport, "down")}: check the distance and the times.`
            : detail;
  }
  return out;
}

/** A blank form starting now, on the athlete's own clock. */
export function emptyFormValues(timezone: string, now = new Date()): FormValues {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(now);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "00";
  return {
    name: "",
    sport_type: "run",
    date: `${get("year")}-${get("month")}-${get("day")}`,
    time: `${get("hour")}:${get("minute")}`,
    duration: "",
    moving_time: "",
    distance: "",
    elevation: "",
    max_speed: "",
    avg_hr: "",
    max_hr: "",
    power: "",
    energy: "",
  };
}

export function toFormValues(a: ActivityWire, units: Units): FormValues {
  const opt = (v: number | null, convert: (n: number) => number, digits: number) => (v === null ? "" : inputNumber(convert(v), digits));
  const [date = "", time = ""] = a.start_local.split("T");
  const distance = distanceUnit(a.sport_type, units);
  return {
    name: a.name,
    sport_type: a.sport_type,
    date,
    // `HH:MM` unless the seconds matter, so the time picker shows what people expect.
    time: time.endsWith(":00") ? time.slice(0, 5) : time,
    duration: formatDuration(a.elapsed_time_s),
    moving_time: a.moving_time_s === null ? "" : formatDuration(a.moving_time_s),
    distance: opt(a.distance_m, distance.fromMeters, distance.inputDigits),
    elevation: opt(a.elevation_gain_m, (m) => fromElevationMeters(m, units), 0),
    max_speed: opt(a.max_speed_mps, (v) => fromMps(v, units), 1),
    avg_hr: opt(a.average_heart_rate_hz, hzToBpm, 0),
    max_hr: opt(a.max_heart_rate_hz, hzToBpm, 0),
    power: opt(a.average_power_w, (w) => w, 0),
    energy: opt(a.energy_j, joulesToKcal, 0),
  };
}

/**
 * A typed number: a comma is a decimal mark ("1,5" km), except in a field of whole metres or
 * yards, where "1,500" is written as the page writes a swim's distance, with a thousands comma.
 */
function typedNumber(text: string, wholeUnits = false): number {
  const t = text.trim();
  const n = wholeUnits && /^\d{1,3}(,\d{3})+$/.test(t) ? t.replaceAll(",", "") : t.replace(",", ".");
  // Decimal digits with one point only: Number() also reads 0x10, 0b11, 1e3 and Infinity, which no one types as a distance.
  return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(n) ? Number(n) : Number.NaN;
}

/** Reads the form into SI units, or says which fields cannot be read. */
export function readForm(v: FormValues, units: Units): { input: ActivityInput; errors?: never } | { input?: never; errors: FormErrors } {
  const errors: FormErrors = {};
  const number = (field: FormField, convert: (n: number) => number, wholeUnits = false): number | null => {
    const text = v[field].trim();
    if (text === "") return null;
    const n = typedNumber(text, wholeUnits);
    if (!Number.isFinite(n)) errors[field] = "Enter a number.";
    else if (n < 0) errors[field] = "Must be zero or more.";
    else return convert(n);
    return null;
  };
  const duration = (field: FormField, required: boolean): number | null => {
    const text = v[field].trim();
    if (text === "") {
      if (required) errors[field] = "Enter how long it took.";
      return null;
    }
    const s = parseDuration(text);
    if (s === null) errors[field] = "Use h:mm:ss, m:ss or a number of minutes.";
    else if (s === 0 && required) errors[field] = "Must be longer than zero.";
    return s;
  };

  const name = v.name.trim();
  if (!name) errors.name = "Enter a name.";
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v.date)) errors.date = "Pick a date.";
  const time = /^\d{2}:\d{2}$/.test(v.time) ? `${v.time}:00` : v.time;
  if (!/^\d{2}:\d{2}:\d{2}$/.test(time)) errors.time = "Pick a start time.";
  const elapsed = duration("duration", true);
  const moving = duration("moving_time", false);
  const unit = distanceUnit(v.sport_type, units);
  const distance = number("distance", unit.toMeters, unit.inputDigits === 0);
  const input: ActivityInput = {
    name,
    sport_type: v.sport_type,
    start_local: `${v.date}T${time}`,
    elapsed_time_s: elapsed ?? 0,
    moving_time_s: moving,
    distance_m: distance,
    elevation_gain_m: number("elevation", (e) => toElevationMeters(e, units)),
    max_speed_mps: number("max_speed", (s) => toMps(s, units)),
    average_heart_rate_hz: number("avg_hr", bpmToHz),
    max_heart_rate_hz: number("max_hr", bpmToHz),
    average_power_w: number("power", (w) => w),
    energy_j: number("energy", kcalToJoules),
  };
  return Object.keys(errors).length ? { errors } : { input };
}

/**
 * The values after a change of sport: a distance typed in the old sport's unit is carried over
 * into the new one's (1.5 km is 1500 m when the sport becomes a swim), so the figure still means
 * what was typed; text that is no number stays as it is.
 */
export function withSport(v: FormValues, sport: SportType, units: Units): FormValues {
  const [from, to] = [distanceUnit(v.sport_type, units), distanceUnit(sport, units)];
  const typed = typedNumber(v.distance, from.inputDigits === 0);
  const carried = from.label !== to.label && v.distance.trim() !== "" && Number.isFinite(typed) && typed >= 0;
  return { ...v, sport_type: sport, distance: carried ? inputNumber(to.fromMeters(from.toMeters(typed)), to.inputDigits) : v.distance };
}

const WIRE_OF: Record<Exclude<FormField, "date" | "time">, keyof ActivityInput> = {
  name: "name",
  sport_type: "sport_type",
  duration: "elapsed_time_s",
  moving_time: "moving_time_s",
  distance: "distance_m",
  elevation: "elevation_gain_m",
  max_speed: "max_speed_mps",
  avg_hr: "average_heart_rate_hz",
  max_hr: "max_heart_rate_hz",
  power: "average_power_w",
  energy: "energy_j",
};

/**
 * The PATCH for an edit: only the fields the person changed, so a value they did not touch is
 * never rewritten through a rounded conversion. When distance or time changed, the API derives
 * the average speed from them again. A distance that only a change of sport carried into another
 * unit (`withSport`) was not changed: sent back through two roundings, it would have replaced
 * the device's average speed with one derived from it.
 */
export function changedFields(before: FormValues, after: FormValues, input: ActivityInput, units: Units): Partial<ActivityInput> {
  const patch: Partial<ActivityInput> = {};
  const set = <K extends keyof ActivityInput>(k: K) => {
    patch[k] = input[k];
  };
  const carried = withSport(before, after.sport_type, units).distance;
  for (const [field, wire] of Object.entries(WIRE_OF) as [keyof typeof WIRE_OF, keyof ActivityInput][]) {
    if (field === "distance" ? after.distance !== carried : before[field] !== after[field]) set(wire);
  }
  if (before.date !== after.date || before.time !== after.time) set("start_local");
  return patch;
}
