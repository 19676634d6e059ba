import { sql } from "drizzle-orm";
import { activities } from "../db/schema";
import { perDatabase, type Db } from "../db/client";
import { activityWireJson } from "./wire-sql";

/** How many activities' wire JSON a process keeps per database (some 600 bytes each). */
const KEPT_WIRE_JSON_MAX = 10_000;

/**
 * The row version of an activity (PostgreSQL's `xmin`, which every write of the row changes):
 * a list reads it instead of the activity's JSON, and builds only what it does not keep.
 */
export const activityVersion = sql<string>`${activities}.xmin::text`;

type Kept = { version: string; json: string };

const kept = perDatabase(() => new Map<string, Kept>());

/** The JSON of the activities a list did not find kept, by id, with the version it was built from. */
const byIds = perDatabase((db: Db) =>
  db
    .select({ id: activities.id, version: activityVersion, json: activityWireJson })
    .from(activities)
    .where(sql`${activities.id} in (select jsonb_array_elements_text(${sql.placeholder("ids")}::jsonb))`)
    .prepare("activities_wire_json_by_ids"),
);

/**
 * Each listed activity's wire JSON (`activityWireJson`, built by PostgreSQL), in the list's
 * order. Building it is most of what a page costs the database (about 1 ms of its CPU for 50
 * activities, against 0.25 ms to find them), and an activity changes far less often than its
 * lists are read: the JSON is kept per activity under the row version it was built from, and a
 * page asks PostgreSQL to build only the activities it has not seen at their listed version
 * (one more round trip, for the misses only). An activity deleted between the two reads is left
 * out; one changed between them is given as it is now.
 */
export async function activityWireJsonOf(db: Db, rows: readonly { id: string; version: string }[]): Promise<string[]> {
  const known = kept(db);
  const missing = rows.filter((r) => known.get(r.id)?.version !== r.version).map((r) => r.id);
  const built = new Map<string, string>();
  if (missing.length > 0) {
    for (const row of await byIds(db).execute({ ids: JSON.stringify(missing) })) {
      built.set(row.id, row.json);
      known.delete(row.id);
      if (known.size >= KEPT_WIRE_JSON_MAX) known.delete(known.keys().next().value!);
      known.set(row.id, { version: row.version, json: row.json });
    }
  }
  return rows.flatMap((r) => {
    const k = known.get(r.id);
    const json = k?.version === r.version ? k.json : built.get(r.id);
    return json === undefined ? [] : [json];
  });
}
