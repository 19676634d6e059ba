/** An instant in the viewer's locale and zone, e.g. "21 Nov 2026, 14:05". */
export function formatInstant(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
