import { SAMPLES_DIR } from "./testing/samples";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { integer, pgTable } from "drizzle-orm/pg-core";
import { activityStreams, bytea } from "../db/schema/files";
import { createTestDatabase } from "../testing/db";
import { parseActivityFile } from "./parse";
import { decodeStreams, encodeStreams } from "./stream-codec";
import { syntheticActivity } from "./synthetic";
import { FileError, STREAM_KEYS, type Streams } from "./types";

/*
 * The storage budget (issue 11): at most 8 bytes per sample per channel on disk, everything
 * included: the activity_streams table with its TOAST table and indexes, for a table of 4-hour
 * rides. The rows go into the real table of the migrated schema; foreign-key triggers are off
 * for the session so no users and activities need inventing (they do not change the table's size).
 */

let handle: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => {
  await handle?.drop();
});

describe("bytea", () => {
  it("is written as base64 text that the server decodes (both drivers' hex is twice the size), and every byte reads back", async () => {
    const { db } = handle;
    const probe = pgTable("bytea_probe", { id: integer("id").primaryKey(), b: bytea("b").notNull() });
    const bytes = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
    const statement = db.insert(probe).values({ id: 1, b: bytes }).toSQL();
    expect(statement.sql).toContain(`decode($2, 'base64')`);
    expect(statement.params).toEqual([1, Buffer.from(bytes).toString("base64")]);

    await db.execute(sql`create table bytea_probe (id integer primary key, b bytea not null)`);
    // A view into a larger buffer (as a file's slices are) writes its own bytes only.
    await db.insert(probe).values([
      { id: 1, b: bytes },
      { id: 2, b: new Uint8Array(0) },
      { id: 3, b: bytes.subarray(7, 9) },
    ]);
    const rows = await db.select().from(probe).orderBy(probe.id);
    expect(rows.map((r) => Buffer.from(r.b).toString("hex"))).toEqual([Buffer.from(bytes).toString("hex"), "", "0708"]);
  });
});

describe("activity_streams on disk", () => {
  it("compresses the streams and the original files with lz4 where the server has it, pglz on PGlite (migration 0010)", async () => {
    const { db, kind } = handle;
    const result = await db.execute(sql`
      select c.relname as table, a.attcompression::text as method
      from pg_attribute a join pg_class c on c.oid = a.attrelid
      where (c.relname, a.attname) in (('activity_streams', 'data'), ('upload_files', 'bytes'))
      order by c.relname`);
    const rows = ((result as unknown as { rows?: unknown[] }).rows ?? result) as { table: string; method: string }[];
    // "l" is lz4; "" is the server's default, pglz, which PGlite (built without lz4) keeps.
    const method = kind === "postgres" ? "l" : "";
    expect(rows.map((r) => [r.table, r.method])).toEqual([
      ["activity_streams", method],
      ["upload_files", method],
    ]);
  });

  it("takes at most 8 bytes per sample per channel for 4-hour rides, TOAST and index included", async () => {
    const { db } = handle;
    const rides = 12;
    let samples = 0;
    let channels = 0;
    let encoded = 0;
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      for (let k = 0; k < rides; k++) {
        const { streams } = syntheticActivity({ hours: 4, seed: 100 + k, sport: k % 3 === 0 ? "run" : "ride" });
        const data = encodeStreams(streams);
        const keys = STREAM_KEYS.filter((key) => streams[key] !== undefined);
        samples += streams.size;
        channels = keys.length;
        encoded += data.length;
        await tx.insert(activityStreams).values({ activityId: `act_probe_${k}`, size: streams.size, keys: [...keys], data });
      }
    });
    await db.execute(sql`vacuum analyze activity_streams`);
    const rows = await db.execute(sql`select pg_total_relation_size('activity_streams')::int as bytes`);
    const bytes = Number((rows as unknown as { rows?: { bytes: number }[] }).rows?.[0]?.bytes ?? (rows as unknown as { bytes: number }[])[0]?.bytes);
    const perSampleChannel = bytes / (samples * channels);
    console.info(
      `activity_streams: ${rides} rides, ${samples} samples × ${channels} channels; encoded ${(encoded / (samples * channels)).toFixed(2)} B, ` +
        `on disk ${bytes} bytes = ${perSampleChannel.toFixed(2)} B per sample per channel`,
    );
    expect(perSampleChannel).toBeLessThanOrEqual(8);

    // And what went in comes out.
    const [row] = await db.select().from(activityStreams).where(sql`${activityStreams.activityId} = 'act_probe_0'`);
    const back = decodeStreams(row!.data);
    expect(back.size).toBe(row!.size);
  });

  it("measures the real device samples (each a row: small files pay the row's own overhead)", async () => {
    const { db } = handle;
    const dir = SAMPLES_DIR;
    const all: Streams[] = [];
    for (const kind of ["fit", "gpx", "tcx"] as const) {
      let names: string[] = [];
      try {
        names = readdirSync(path.join(dir, kind));
      } catch {
        continue;
      }
      for (const name of names) {
        try {
          all.push(...parseActivityFile(readFileSync(path.join(dir, kind, name)), kind).map((a) => a.streams));
        } catch (e) {
          if (!(e instanceof FileError)) throw e;
        }
      }
    }
    if (!all.length) return;
    await db.execute(sql`truncate activity_streams`);
    let cells = 0;
    let encoded = 0;
    let bigCells = 0;
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      for (const [k, streams] of all.entries()) {
        const keys = STREAM_KEYS.filter((key) => streams[key] !== undefined);
        const data = encodeStreams(streams);
        cells += streams.size * keys.length;
        if (streams.size >= 1000) bigCells += streams.size * keys.length;
        encoded += data.length;
        await tx.insert(activityStreams).values({ activityId: `act_sample_${k}`, size: streams.size, keys: [...keys], data });
      }
    });
    await db.execute(sql`vacuum analyze activity_streams`);
    const rows = await db.execute(sql`select pg_total_relation_size('activity_streams')::int as bytes`);
    const bytes = Number((rows as unknown as { rows?: { bytes: number }[] }).rows?.[0]?.bytes ?? (rows as unknown as { bytes: number }[])[0]?.bytes);
    console.info(
      `activity_streams, ${all.length} activities from the samples: ${cells} sample-channels (${bigCells} in activities of 1,000+ samples); ` +
        `encoded ${(encoded / cells).toFixed(2)} B, on disk ${bytes} bytes = ${(bytes / cells).toFixed(2)} B per sample per channel`,
    );
    expect(encoded / cells).toBeLessThan(8);
  });
});
