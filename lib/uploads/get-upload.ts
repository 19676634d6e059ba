import { and, eq } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { requireAthleteActor } from "../athletes/reach";
import { uploads } from "../db/schema";
import { ApiError } from "../http/errors";
import { toUploadWire } from "./to-wire";

/** An upload, to its athlete only: anyone else gets the same 404 as for an id that does not exist. */
export async function getUpload({ ctx, uploadId }: { ctx: Ctx; uploadId: string }) {
  requireAthleteActor(ctx.actor);
  const [row] = await ctx.db
    .select()
    .from(uploads)
    .where(and(eq(uploads.id, uploadId), eq(uploads.athleteId, ctx.actor.userId)))
    .limit(1);
  if (!row) throw new ApiError("not_found", `No upload ${uploadId}.`);
  return toUploadWire(row);
}
