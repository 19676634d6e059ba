import { asc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import type { Db } from "../db/client";
import { activityLaps } from "../db/schema";
import type { Lap, LapList } from "./file-schemas";
import { reachableActivityIdentity } from "./get-activity";

export function toLapWire(row: typeof activityLaps.$inferSelect): z.input<typeof Lap> {
  return {
    index: row.index,
    start_offset_s: row.startOffsetS,
    elapsed_time_s: row.elapsedTimeS,
    moving_time_s: row.movingTimeS,
    distance_m: row.distanceM,
    elevation_gain_m: row.elevationGainM,
    average_speed_mps: row.averageSpeedMps,
    max_speed_mps: row.maxSpeedMps,
    average_heart_rate_hz: row.averageHeartRateHz,
    max_heart_rate_hz: row.maxHeartRateHz,
    average_power_w: row.averagePowerW,
  };
}

/** An activity's lap rows, in order; its reach is the caller's to check. */
export function readLaps(db: Db, activityId: string) {
  return db.select().from(activityLaps).where(eq(activityLaps.activityId, activityId)).orderBy(asc(activityLaps.index));
}

/** The laps of an activity the actor reaches (CONTRACT §11), in order; one recorded by hand has none. */
export async function getLaps({ ctx, activityId }: { ctx: Ctx; activityId: string }): Promise<z.input<typeof LapList>> {
  await reachableActivityIdentity(ctx, activityId);
  return { data: (await readLaps(ctx.db, activityId)).map(toLapWire) };
}
