// The API speaks SI; people read km and km/h, or miles and minutes per mile (CONTRACT §9).
// Everything the console shows or accepts in the athlete's units passes through here.

export type Units = "metric" | "imperial";

export const METERS_PER_MILE = 1609.344;
export const METERS_PER_FOOT = 0.3048;
export const METERS_PER_YARD = 0.9144;
export const JOULES_PER_KCAL = 4184;

export function unitsOf(usesMetricUnits: boolean): Units {
  return usesMetricUnits ? "metric" : "imperial";
}

export const UNIT_LABELS = {
  metric: { distance: "km", elevation: "m", speed: "km/h", pace: "/km", swimPace: "/100 m" },
  imperial: { distance: "mi", elevation: "ft", speed: "mph", pace: "/mi", swimPace: "/100 yd" },
} as const satisfies Record<Units, Record<string, string>>;

/** What a pace is given per: a km or a mile, or for a swim 100 m or 100 yards, as swimmers read it. */
export type PaceBasis = "distance" | "swim";

/** The distance a pace is the time for, in metres, and its words (`/km`, `/100 yd`). */
export function pacePer(units: Units, basis: PaceBasis = "distance"): { meters: number; label: string } {
  if (basis === "swim") return { meters: units === "metric" ? 100 : 100 * METERS_PER_YARD, label: UNIT_LABELS[units].swimPace };
  return { meters: units === "metric" ? 1000 : METERS_PER_MILE, label: UNIT_LABELS[units].pace };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Metres to the athlete's distance unit (km or mi). */
export function fromMeters(m: number, units: Units): number {
  return units === "metric" ? m / 1000 : m / METERS_PER_MILE;
}

/** A distance in the athlete's unit (km or mi) to metres. */
export function toMeters(d: number, units: Units): number {
  return units === "metric" ? d * 1000 : d * METERS_PER_MILE;
}

/** Elevation is shown in metres or feet, not in km or miles. */
export function fromElevationMeters(m: number, units: Units): number {
  return units === "metric" ? m : m / METERS_PER_FOOT;
}

export function toElevationMeters(e: number, units: Units): number {
  return units === "metric" ? e : e * METERS_PER_FOOT;
}

/** m/s to km/h or mph. */
export function fromMps(mps: number, units: Units): number {
  return units === "metric" ? mps * 3.6 : (mps * 3600) / METERS_PER_MILE;
}

/** km/h or mph to m/s. */
export function toMps(speed: number, units: Units): number {
  return units === "metric" ? speed / 3.6 : (speed * METERS_PER_MILE) / 3600;
}

export const hzToBpm = (hz: number) => hz * 60;
export const bpmToHz = (bpm: number) => bpm / 60;
export const joulesToKcal = (j: number) => j / JOULES_PER_KCAL;
export const kcalToJoules = (kcal: number) => kcal * JOULES_PER_KCAL;

/** Seconds as `h:mm:ss`, or `m:ss` under an hour. */
export function formatDuration(totalS: number): string {
  const s = Math.round(totalS);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/**
 * A duration typed by a person: `h:mm:ss`, `m:ss`, or a bare number of minutes, in seconds. Null
 * when it is none of these, so the form can say so before anything is sent; zero is read as
 * zero, and the form says whether a field may be zero.
 */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) {
    return Math.round(Number(t) * 60);
  }
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{1,2})$/.exec(t);
  if (!m) return null;
  const [h, min, sec] = [Number(m[1] ?? 0), Number(m[2]), Number(m[3])];
  if (sec >= 60 || (m[1] !== undefined && min >= 60)) return null;
  return h * 3600 + min * 60 + sec;
}

export function formatDistance(m: number, units: Units): string {
  return `${fromMeters(m, units).toFixed(2)} ${UNIT_LABELS[units].distance}`;
}

/** A swim's distance unit: metres or yards, as swimmers count lengths. */
export const SWIM_DISTANCE_LABELS: Record<Units, string> = { metric: "m", imperial: "yd" };

/** Metres in a swim's distance unit (metres or yards). */
export function fromSwimMeters(m: number, units: Units): number {
  return units === "metric" ? m : m / METERS_PER_YARD;
}

/** A swim's distance in metres or yards to metres. */
export function toSwimMeters(v: number, units: Units): number {
  return units === "metric" ? v : v * METERS_PER_YARD;
}

/** A swim's distance as swimmers read it: whole metres or yards (`1,500 m`, `1,640 yd`). */
export function formatSwimDistance(m: number, units: Units): string {
  return `${Math.round(fromSwimMeters(m, units)).toLocaleString("en-US")} ${SWIM_DISTANCE_LABELS[units]}`;
}

export function formatElevation(m: number, units: Units): string {
  return `${Math.round(fromElevationMeters(m, units))} ${UNIT_LABELS[units].elevation}`;
}

export function formatSpeed(mps: number, units: Units): string {
  return `${fromMps(mps, units).toFixed(1)} ${UNIT_LABELS[units].speed}`;
}

/** Time per km or mile (`m:ss /mi`), or per 100 m or 100 yd for a swim; a dash when standing still, which has no pace. */
export function formatPace(mps: number, units: Units, basis: PaceBasis = "distance"): string {
  if (!(mps > 0)) return "—";
  const per = pacePer(units, basis);
  return `${formatDuration(per.meters / mps)} ${per.label}`;
}

/** How the athlete reads an average: km/h for metric, min/mile pace for imperial (CONTRACT §9). */
export function formatAverage(mps: number, units: Units): string {
  return units === "metric" ? formatSpeed(mps, units) : formatPace(mps, units);
}

/** A number for an input's value: rounded, without trailing zeros. */
export function inputNumber(n: number, digits = 2): string {
  return String(round(n, digits));
}

/**
 * A local wall-clock time (`2026-03-01T07:30:00`, already in the athlete's zone) for people.
 * Formatted as if in UTC so that the browser's own zone never shifts it.
 */
export function formatLocal(
  startLocal: string,
  opts: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short" },
  locale?: string,
): string {
  const [d, t = "00:00:00"] = startLocal.split("T");
  const [y, mo, day] = d!.split("-").map(Number);
  const [h, mi, s] = t.split(":").map(Number);
  const at = Date.UTC(y!, mo! - 1, day!, h ?? 0, mi ?? 0, s ?? 0);
  return new Intl.DateTimeFormat(locale, { ...opts, timeZone: "UTC" }).format(at);
}
