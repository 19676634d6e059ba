import type { ActivityWire } from "@/lib/activities/schemas";
import { formatInstant } from "@/components/ui/format";

/**
 * Where an activity came from, in words. `source` is `manual`, `upload`, or the app or
 * integration that sent it (CONTRACT §4: a client id such as `demo-training-log`, or `garmin`).
 */
export function describeSource(source: string): string {
  if (source === "manual") return "Recorded by hand";
  if (source === "upload") return "Uploaded file";
  return `Added by an app (${source})`;
}

/**
 * The "Record" card: where the activity came from and when it was made and last changed, in the
 * athlete's zone. Not its id, which tells a person nothing (it is in the page's address for
 * whoever needs it).
 */
export function recordRows(a: Pick<ActivityWire, "source" | "created_at" | "updated_at">, timeZone: string): [string, string][] {
  return [
    ["Source", describeSource(a.source)],
    ["Created", formatInstant(a.created_at, timeZone)],
    ["Last changed", formatInstant(a.updated_at, timeZone)],
  ];
}
