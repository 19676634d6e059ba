import { ConsoleApiError } from "@/components/console/api";

// What a person reads when an action on one activity is refused. The service's own detail
// ("Activity act_… was not found.") speaks to developers and names an internal id: these say
// what happened, as the activity's page says it.

/** The activity's page, when the activity is not there (deleted, or a wrong address). */
export const ACTIVITY_NOT_HERE = "This activity is not here: it was deleted, or the address is wrong.";

const notFound = (e: unknown) => e instanceof ConsoleApiError && e.status === 404;

// The one 404 an activity that is still there gives: a GPX track without a position in it.
const noTrack = (e: Error, format: string) => format === "gpx" && /position/i.test(e.message);

/** Whether a download's refusal says the activity itself is gone. `format` is the one asked for. */
export const downloadFoundItGone = (e: Error, format: string): boolean => notFound(e) && !noTrack(e, format);

/** Why a download failed, in words. `format` is the one asked for. */
export function describeDownloadProblem(e: Error, format: string): string {
  if (!notFound(e)) return e.message;
  if (noTrack(e, format))
    return "This activity recorded no positions (on a trainer or a treadmill, say), so it has no GPX track: download it as FIT or TCX.";
  return "This activity is not here any more: it was deleted, so there is nothing to download.";
}

/** Why saving a change failed, in words; the same error when it is not the activity's absence (the form shows its fields' errors). */
export function describeSaveProblem(e: Error): Error {
  return notFound(e) ? new Error("This activity is not here any more: it was deleted, so the change could not be saved.") : e;
}
