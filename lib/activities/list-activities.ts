import { and, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { activities } from "../db/schema";
import { decodeLocalTimeCursor, page } from "../http/pagination";
import { requireAthleteActor, resolveReachableAthlete } from "../athletes/reach";
import type { ListActivitiesQuery } from "./schemas";
import { rawJson } from "../http/raw-json";
import { activityWireJson } from "./wire-sql";

/** Newest first, keyset-paginated on (start_local, id): page 100 costs what page 1 does. */
export async function listActivities({
  ctx,
  athleteId,
  query,
}: {
  ctx: Ctx;
  athleteId: string;
  query: z.output<typeof ListActivitiesQuery>;
}) {
  requireAthleteActor(ctx.actor);
  const id = await resolveReachableAthlete(ctx.db, ctx.actor, athleteId);
  const where: SQL[] = [eq(activities.athleteId, id)];
  if (query.start) where.push(gte(activities.startLocal, `${query.start} 00:00:00`));
  if (query.end) where.push(lt(activities.startLocal, `${query.end} 00:00:00`));
  if (query.sport_type) where.push(eq(activities.sportType, query.sport_type));
  if (query.cursor) {
    const [start, lastId] = decodeLocalTimeCursor(query.cursor);
    const bound = start.replace("T", " ");
    // The plain bound is redundant but estimable: without it the planner misjudges the row
    // comparison's selectivity and sorts every older row instead of walking the index.
    where.push(sql`${activities.startLocal} <= ${bound}::timestamp`);
    where.push(sql`(${activities.startLocal}, ${activities.id}) < (${bound}::timestamp, ${lastId})`);
  }
  const rows = await ctx.db
    .select({ json: activityWireJson, startLocal: activities.startLocal, id: activities.id })
    .from(activities)
    .where(and(...where))
    .orderBy(desc(activities.startLocal), desc(activities.id))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.startLocal, r.id]);
  return rawJson(`{"data":[${p.data.map((r) => r.json).join(",")}],"next_cursor":${JSON.stringify(p.next_cursor)}}`);
}
