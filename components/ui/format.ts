/**
 * An instant in the viewer's locale, e.g. "21 Nov 2026, 14:05": in `timeZone` when given (an
 * athlete's own data reads in their zone, CONTRACT §9), else in the browser's.
 */
export function formatInstant(iso: string, timeZone?: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short", timeZone });
}
