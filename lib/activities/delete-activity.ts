import { eq, inArray } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { activities, uploads } from "../db/schema";
import { deleteUploadFile } from "../uploads/file-chunks";
import { appendEvent } from "../events/append-event";
import { requireAthleteActor } from "../athletes/reach";
import { findOwnActivity, activityNotFound } from "./get-activity";

/**
 * Deletes the actor's own activity with its streams and laps (their rows cascade) and emits
 * `activity.deleted` in the caller's transaction. A coach reads their athletes' activities but
 * does not delete them. When no activity made from the same upload remains, the stored file
 * goes too, so the athlete can upload it again (CONTRACT §11), under the same `external_id` too;
 * the upload's record stays, for whoever polls it.
 */
export async function deleteActivity({ ctx, activityId }: { ctx: WriteCtx; activityId: string }): Promise<void> {
  requireAthleteActor(ctx.actor);
  const actor = ctx.actor;
  const existing = await findOwnActivity(ctx, activityId, { doing: "delete" });
  // The upload's row is locked first, so two deletes of a multisport file's last two
  // activities see each other: the second one to lock finds nothing left and drops the file.
  const [upload] = existing.uploadId
    ? await ctx.db.select({ id: uploads.id, activityIds: uploads.activityIds }).from(uploads).where(eq(uploads.id, existing.uploadId)).for("update")
    : [];
  const deleted = await ctx.db.delete(activities).where(eq(activities.id, activityId)).returning({ id: activities.id });
  // A concurrent delete of the same activity committed first.
  if (!deleted.length) throw activityNotFound(activityId);
  if (upload) {
    const others = upload.activityIds.filter((id) => id !== activityId);
    const remaining = others.length
      ? await ctx.db.select({ id: activities.id }).from(activities).where(inArray(activities.id, others)).limit(1)
      : [];
    // With its last activity gone, the upload lets go of its file and of its external_id, so a
    // client that names the file by its own id can send it again under that id and have it made
    // anew (a replay of the old upload would answer an activity that is no more).
    if (!remaining.length) {
      await deleteUploadFile(ctx.db, upload.id);
      await ctx.db.update(uploads).set({ externalId: null }).where(eq(uploads.id, upload.id));
    }
  }
  await appendEvent(ctx.db, { type: "activity.deleted", athleteId: actor.userId, objectId: activityId, objectType: "activity" });
}
