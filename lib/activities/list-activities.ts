import { and, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { activities } from "../db/schema";
import { batchedLookup } from "../db/batcher";
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
function beforeCursor(bound: SQL | string, lastId: SQL | string): SQL[] {
  return [
    sql`${activities.startLocal} <= ${bound}::timestamp`,
    sql`(${activities.startLocal}, ${activities.id}) < (${bound}::timestamp, ${lastId})`,
  ];
}

/** A listed activity as a page carries it: its id, its row version and its local start. */
type PageRow = [id: string, version: string, startLocal: string];

/**
 * One page per key, each as one row holding the page as a JSON array of `PageRow`s, for the two
 * shapes nearly every request has: the first page (the key is `[athleteId, limit]`) and a later
 * one (`[athleteId, bound, lastId, limit]`). Concurrent requests' pages go in one statement
 * (batchedLookup, lib/db/batcher.ts): under load one round trip and one execution serve many
 * lists, and a page of 51 rows is one row for the driver and drizzle to read, not 51 (mapping
 * the rows was 5% of a list's time in the service). Each key's page is a lateral subquery
 * that walks `activities_athlete_start_idx` as the single page did. Filtered lists are built
 * per request.
 */
function pagesBy(db: Db, name: string, where: SQL) {
  const statement = db
    .select({ key: sql<string>`q.key`, rows: sql<PageRow[]>`coalesce(p.rows, '[]'::json)` })
    .from(
      sql`jsonb_array_elements_text(${sql.placeholder("keys")}::jsonb) as q(key) cross join lateral (
        select json_agg(json_build_array(a.id, a.version, a.start_local) order by a.start_local_ts desc, a.id desc) as rows
        from (
          select ${activities.id} as id, ${activityVersion} as version, ${activities.startLocal}::text as start_local, ${activities.startLocal} as start_local_ts
          from ${activities}
          where ${where}
          order by ${sql.join([...newestFirst], sql`, `)}
          limit ((q.key::jsonb) ->> -1)::int
        ) a
      ) p`,
    )
    .prepare(name);
  return batchedLookup((keys) => statement.execute({ keys }), (row) => row.key);
}

const athleteOfKey = sql`(q.key::jsonb) ->> 0`;
const pages = perDatabase((db: Db) => ({
  first: pagesBy(db, "activities_pages_first", sql`${activities.athleteId} = ${athleteOfKey}`),
  after: pagesBy(db, "activities_pages_after", sql`${activities.athleteId} = ${athleteOfKey} and ${sql.join(beforeCursor(sql`((q.key::jsonb) ->> 1)`, sql`((q.key::jsonb) ->> 2)`), sql` and `)}`),
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
  const [start, lastId] = query.cursor ? decodeLocalTimeCursor(query.cursor, "act") : [];
  const bound = start?.replace("T", " ");
  const limit = query.limit + 1;
  let rows: { version: string; startLocal: string; id: string }[];
  if (!query.start && !query.end && !query.sport_type) {
    const batched = pages(ctx.db);
    const found = bound !== undefined
      ? await batched.after(JSON.stringify([id, bound, lastId, limit]))
      : await batched.first(JSON.stringify([id, limit]));
    rows = (found?.rows ?? []).map(([rowId, version, startLocal]) => ({ id: rowId, version, startLocal }));
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
