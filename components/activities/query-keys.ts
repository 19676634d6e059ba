import type { QueryClient } from "@tanstack/react-query";

/** TanStack Query keys shared by the activity list and detail, so a change in one refreshes the other. */
export const ACTIVITIES_KEY = ["activities"] as const;
/** The weekly volume on `/activities` (weekly-volume-chart.tsx). */
export const SUMMARY_KEY = ["activities", "summary", "week"] as const;
export const activityKey = (id: string) => ["activities", "one", id] as const;
export const uploadKey = (id: string) => ["uploads", id] as const;
export const streamsKey = (id: string) => ["activities", "one", id, "streams"] as const;
export const lapsKey = (id: string) => ["activities", "one", id, "laps"] as const;
/** What the list says on arriving from a deleted activity's page (set there, read once here). */
export const DELETED_NOTICE_KEY = ["notice", "activity-deleted"] as const;

/**
 * An activity was added, changed or deleted (by hand, an upload, an edit): what lists the
 * athlete's activities refreshes, the list and the weekly volume, and not every activity's
 * detail under the same prefix.
 */
export function activitiesChanged(qc: QueryClient): void {
  void qc.invalidateQueries({ queryKey: ACTIVITIES_KEY, exact: true });
  void qc.invalidateQueries({ queryKey: SUMMARY_KEY, exact: true });
}

/**
 * A request about one activity was answered 404: it was deleted elsewhere (another tab, an app).
 * Its page asks again, learns it is gone and says so instead of showing what it had; the lists
 * refresh too.
 */
export function activityGone(qc: QueryClient, id: string): void {
  void qc.invalidateQueries({ queryKey: activityKey(id), exact: true });
  activitiesChanged(qc);
}
