import { eq, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { hasScope, requireScopes } from "../auth/require-scope";
import { requireAthleteActor } from "../athletes/reach";
import { batchedLookup } from "../db/batcher";
import { perDatabase, type Db } from "../db/client";
import { activities, activityStreams } from "../db/schema";
import { cachedStreamsAnswer, streamsJsonBytesFromStored } from "../files/streams-json";
import { STREAM_KEYS, type StreamKey } from "../files/types";
import { rawJson, rawJsonBytes, type RawJson } from "../http/raw-json";
import type { StreamsQuery } from "./file-schemas";
import { activityNotFound, reachedActivity } from "./get-activity";

/**
 * The path's two queries, built once per database (drizzle would otherwise write their SQL again
 * on every request, as with the activity list's pages). The identity, read on every request, is
 * looked up in batches (lib/db/batcher.ts): a chart's concurrent requests share one statement.
 */
const streamsQueries = perDatabase((db: Db) => {
  const identities = db
    .select({
      id: activities.id,
      athleteId: activities.athleteId,
      length: sql<number | null>`octet_length(${activityStreams.data})`.mapWith(Number),
      version: sql<string | null>`${activityStreams}.xmin::text`,
    })
    .from(activities)
    .leftJoin(activityStreams, eq(activityStreams.activityId, activities.id))
    .where(sql`${activities.id} in (select jsonb_array_elements_text(${sql.placeholder("ids")}::jsonb))`)
    .prepare("activity_streams_identities");
  return {
    identity: batchedLookup((ids) => identities.execute({ ids }), (row) => row.id),
    // As base64: both drivers read a bytea as hex text, which costs more to send and decode
    // (a 4-hour ride's 220 KB row: 5.2 ms as bytea, 3.7 ms as base64, on PostgreSQL 15).
    // The identity again, with the bytes: the answer is kept under the version it was made from.
    bytes: db
      .select({ data: sql<string>`encode(${activityStreams.data}, 'base64')`, version: sql<string>`${activityStreams}.xmin::text` })
      .from(activityStreams)
      .where(eq(activityStreams.activityId, sql.placeholder("activityId")))
      .prepare("activity_streams_bytes"),
  };
});

/**
 * CONTRACT §11's streams answer for an activity the actor reaches. The path is kept lean (it
 * serves every chart and is held to a throughput target): one query reads the activity's
 * owner and its streams row's identity (row version and length, not a byte of the value), a
 * second its bytes unless the answer is kept, and the answer's bytes are written from the stored
 * integers (`streamsJsonBytesFromStored`: `low` and `medium` samples were chosen when the
 * streams were stored, and a repeated request is answered from its cache) and sent as they are,
 * never parsed and serialised again.
 */
export async function getStreams({
  ctx,
  activityId,
  query,
}: {
  ctx: Ctx;
  activityId: string;
  query: z.output<typeof StreamsQuery>;
}): Promise<RawJson> {
  requireAthleteActor(ctx.actor);
  const asked = query.keys ? new Set<StreamKey>(query.keys) : null;
  if (asked?.has("latlng")) requireScopes(ctx.actor, ["location.read"], "The `latlng` stream");
  // First the owner and the stored value's identity, not its bytes: a repeated request (a chart
  // opened again, a client polling) is answered from the answers kept in
  // lib/files/streams-json.ts without reading the row's bytes. The length comes from the TOAST
  // pointer; the value's own last bytes would have meant decompressing all of it.
  const row = await reachedActivity(ctx, activityId, await streamsQueries(ctx.db).identity(activityId));
  const resolution = query.resolution;
  if (row.length === null || row.version === null) {
    return rawJson(JSON.stringify({ activity_id: activityId, resolution, original_size: 0, size: 0, streams: {} }));
  }
  // The answer leaves out the keys the activity never recorded.
  const keys = asked ? STREAM_KEYS.filter((k) => asked.has(k)) : hasScope(ctx.actor, "location.read") ? STREAM_KEYS : STREAM_KEYS.filter((k) => k !== "latlng");
  const kept = cachedStreamsAnswer({ activityId, resolution, keys, version: row.version, length: row.length });
  if (kept) return rawJsonBytes(kept);
  const [stored] = await streamsQueries(ctx.db).bytes.execute({ activityId });
  // Deleted between the two reads.
  if (!stored) throw activityNotFound(activityId);
  const data = Buffer.from(stored.data, "base64");
  return rawJsonBytes(streamsJsonBytesFromStored({ activityId, resolution, keys, version: stored.version, length: data.byteLength, data }));
}
