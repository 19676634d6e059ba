import { and, desc, eq, gte, lt, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { activities } from "../db/schema";
import { perDatabase, type Db } from "../db/client";
import { decodeLocalTimeCursor, page } from "../http/pagination";
import { requireAthleteActor, resolveReachableAthlete } from "../athletes/reach";
import type { ListActivitiesQuery } from "./schemas";
import { rawJson } from "../http/raw-json";
import { activityVersion, activityWireJsonOf } from "./kept-wire-json";

/** A page reads each activity's row version, not its JSON: that comes from `activityWireJsonOf`. */
const listColumns = { version: activityVersion, startLocal: activities.startLocal, id: activities.id };
const newestFirst = [desc(activities.startLocal), desc(activities.id)] as const;

/**
 * A page of rows at or before the cursor (start_local, id). The plain bound is redundant but
 * estimable: without it the planner misjudges the row comparison's selectivity and sorts every
 * older row instead of walking the index.
 */
function beforeCursor(bound: Placeholder | string, lastId: Placeholder | string): SQL[] {
  return [
    sql`${activities.startLocal} <= ${bound}::timestamp`,
    sql`(${activities.startLocal}, ${activities.id}) < (${bound}::timestamp, ${lastId})`,
  ];
}

/**
 * The two shapes nearly every request has (the first page; a later page), built once per
 * database: drizzle otherwise writes the same SQL text again on every request (about 7% of the
 * list's time in the service, bench/README.md "Runtime"). Filtered lists are built per request.
 */
const preparedPages = perDatabase((db: Db) => ({
  first: db
    .select(listColumns)
    .from(activities)
    .where(eq(activities.athleteId, sql.placeholder("athleteId")))
    .orderBy(...newestFirst)
    .limit(sql.placeholder("limit"))
    .prepare("activities_page_first"),
  after: db
    .select(listColumns)
    .from(activities)
    .where(and(eq(activities.athleteId, sql.placeholder("athleteId")), ...beforeCursor(sql.placeholder("bound"), sql.placeholder("lastId"))))
    .orderBy(...newestFirst)
    .limit(sql.placeholder("limit"))
    .prepare("activities_page_after"),
}));

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
  const [start, lastId] = query.cursor ? decodeLocalTimeCursor(query.cursor) : [];
  const bound = start?.replace("T", " ");
  const limit = query.limit + 1;
  let rows: { version: string; startLocal: string; id: string }[];
  if (!query.start && !query.end && !query.sport_type) {
    const pages = preparedPages(ctx.db);
    rows = bound !== undefined
      ? await pages.after.execute({ athleteId: id, bound, lastId, limit })
      : await pages.first.execute({ athleteId: id, limit });
  } else {
    const where: SQL[] = [eq(activities.athleteId, id)];
    if (query.start) where.push(gte(activities.startLocal, `${query.start} 00:00:00`));
    if (query.end) where.push(lt(activities.startLocal, `${query.end} 00:00:00`));
    if (query.sport_type) where.push(eq(activities.sportType, query.sport_type));
    if (bound !== undefined) where.push(...beforeCursor(bound, lastId!));
    rows = await ctx.db.select(listColumns).from(activities).where(and(...where)).orderBy(...newestFirst).limit(limit);
  }
  const p = page(rows, query.limit, (r) => [r.startLocal, r.id]);
  const json = await activityWireJsonOf(ctx.db, p.data);
  return rawJson(`{"data":[${json.join(",")}],"next_cursor":${JSON.stringify(p.next_cursor)}}`);
}
