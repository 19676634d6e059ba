const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** The years a local date or time may name: past any activity or filter a person means, within every database's range. */
export const FIRST_YEAR = 1900;
export const LAST_YEAR = 2200;

function isRealDay(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const monthEnd = new Date(0);
  monthEnd.setUTCFullYear(y, m, 0); // not Date.UTC, which reads years 0–99 as 1900–1999
  return d <= monthEnd.getUTCDate();
}

/** `YYYY-MM-DD` naming a day that exists (2026-02-30 does not), in any year. */
export function isRealLocalDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  return !!m && isRealDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** `YYYY-MM-DDTHH:MM:SS`, no offset, naming a day that exists, in any year. */
export function isRealLocalDateTime(s: string): boolean {
  const m = DATETIME_RE.exec(s);
  if (!m || !isRealDay(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  return Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60;
}

/** Whether a date or time that starts `YYYY` is in FIRST_YEAR..LAST_YEAR. */
export function inServedYears(s: string): boolean {
  const y = Number(s.slice(0, 4));
  return y >= FIRST_YEAR && y <= LAST_YEAR;
}

/** `YYYY-MM-DD` naming a day that exists (2026-02-30 does not), FIRST_YEAR to LAST_YEAR. */
export function isValidLocalDate(s: string): boolean {
  return isRealLocalDate(s) && inServedYears(s);
}

/** `YYYY-MM-DDTHH:MM:SS`, no offset: wall-clock time read against the athlete's timezone. */
export function isValidLocalDateTime(s: string): boolean {
  return isRealLocalDateTime(s) && inServedYears(s);
}

/**
 * Zones IANA renamed whose old name is the one ICU (and so `Intl.supportedValuesOf`) still
 * lists: the old name, then today's. Both are taken (a profile may hold either; ICU and
 * PostgreSQL read both); the picker offers today's, which is the one people look for.
 */
const RENAMED_ZONES: Record<string, string> = {
  "Africa/Asmera": "Africa/Asmara",
  "America/Buenos_Aires": "America/Argentina/Buenos_Aires",
  "America/Catamarca": "America/Argentina/Catamarca",
  "America/Coral_Harbour": "America/Atikokan",
  "America/Cordoba": "America/Argentina/Cordoba",
  "America/Godthab": "America/Nuuk",
  "America/Indianapolis": "America/Indiana/Indianapolis",
  "America/Jujuy": "America/Argentina/Jujuy",
  "America/Louisville": "America/Kentucky/Louisville",
  "America/Mendoza": "America/Argentina/Mendoza",
  "Asia/Calcutta": "Asia/Kolkata",
  "Asia/Katmandu": "Asia/Kathmandu",
  "Asia/Rangoon": "Asia/Yangon",
  "Asia/Saigon": "Asia/Ho_Chi_Minh",
  "Atlantic/Faeroe": "Atlantic/Faroe",
  "Europe/Kiev": "Europe/Kyiv",
  "Pacific/Enderbury": "Pacific/Kanton",
  "Pacific/Ponape": "Pacific/Pohnpei",
  "Pacific/Truk": "Pacific/Chuuk",
};

let picker: string[] | undefined;
let accepted: Set<string> | undefined;

/**
 * Etc/GMT-14 … Etc/GMT+12: zones of a fixed offset (POSIX signs: Etc/GMT+12 is UTC−12, the only
 * zone there, "anywhere on Earth"), which ICU keeps under their own names without listing them.
 */
const FIXED_OFFSET_ZONES = Array.from({ length: 27 }, (_, i) => i - 14)
  .filter((n) => n !== 0)
  .map((n) => `Etc/GMT${n > 0 ? "+" : "-"}${Math.abs(n)}`);

/** The zones to pick from: every zone ICU knows, under today's IANA name, sorted, UTC first. */
export function timezones(): string[] {
  return (picker ??= ["UTC", ...new Set([...Intl.supportedValuesOf("timeZone").map((z) => RENAMED_ZONES[z] ?? z), ...FIXED_OFFSET_ZONES])].sort((a, b) =>
    a === "UTC" ? -1 : b === "UTC" ? 1 : a.localeCompare(b),
  ));
}

export function isValidTimezone(tz: string): boolean {
  accepted ??= new Set(["UTC", ...Intl.supportedValuesOf("timeZone"), ...Object.values(RENAMED_ZONES), ...FIXED_OFFSET_ZONES]);
  return accepted.has(tz);
}

/**
 * The name this service takes for a zone ICU knows by another (`US/Eastern` → America/New_York,
 * `Etc/UTC` and `GMT` → UTC, `europe/oslo` → Europe/Oslo), `tz` itself when it is taken as it
 * is, or undefined for no zone (an offset such as `+05:30` is no zone: it knows no summer time).
 */
export function canonicalTimezone(tz: string): string | undefined {
  if (isValidTimezone(tz)) return tz;
  if (tz.length > 64 || !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(tz)) return undefined;
  try {
    const resolved = new Intl.DateTimeFormat("en", { timeZone: tz }).resolvedOptions().timeZone;
    const named = RENAMED_ZONES[resolved] ?? resolved;
    return isValidTimezone(named) ? named : undefined;
  } catch {
    return undefined;
  }
}

/** The wall-clock time in `tz` at instant `at`, as `YYYY-MM-DDTHH:MM:SS`. */
export function localDateTimeIn(tz: string, at: Date): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: tz,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  }).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "00";
  return `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}:${get("second")}`;
}

/** Postgres `timestamp` text (`2026-01-02 03:04:05`) to the wire form (`2026-01-02T03:04:05`). */
export function toWireLocal(pg: string): string {
  return pg.replace(" ", "T").slice(0, 19);
}

/** A local date (`YYYY-MM-DD`) moved by whole days. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The Monday that starts the week (ISO 8601) of a local date. */
export function mondayOf(date: string): string {
  return addDays(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7));
}

/** Today's date in `tz`, as `YYYY-MM-DD`. */
export function localToday(tz: string, at = new Date()): string {
  return localDateTimeIn(tz, at).slice(0, 10);
}
