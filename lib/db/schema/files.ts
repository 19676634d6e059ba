import { sql } from "drizzle-orm";
import { boolean, customType, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { measure, PRECISION } from "./measure";
import { users } from "./people";
import { activities } from "./activities";

/**
 * Raw bytes. PGlite answers a Uint8Array, postgres.js a Buffer (itself a Uint8Array).
 *
 * Written as base64 text that PostgreSQL decodes: given the bytes, both drivers send a bytea
 * parameter as hex text, twice their size, and postgres.js spent about twice the server's CPU
 * making and sending that (a 120 KB value, measured on PostgreSQL 15: 2.4–4.3 ms a statement as
 * hex, 1.2–1.7 ms as base64). Every write of an upload's original and of an activity's streams
 * goes through here.
 */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  toDriver: (value) => sql`decode(${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64")}, 'base64')`,
});

/**
 * One file an athlete (or an app for them) sent (CONTRACT §11). Processing claims it with a
 * lease (`claimed_until`), so an upload whose processor died is taken up again.
 * `uploader` scopes `external_id`: the app's client_id, or `athlete` for the athlete's own
 * PATs and console together.
 */
export const uploads = pgTable(
  "uploads",
  {
    id: text("id").primaryKey(),
    athleteId: text("athlete_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    uploader: text("uploader").notNull(),
    externalId: text("external_id"),
    status: text("status", { enum: ["processing", "succeeded", "failed"] }).notNull().default("processing"),
    dataType: text("data_type", { enum: ["fit", "gpx", "tcx"] }).notNull(),
    fileName: text("file_name"),
    /** The optional `name` and `sport_type` fields sent with the file. */
    nameOverride: text("name_override"),
    sportTypeOverride: text("sport_type_override"),
    gzip: boolean("gzip").notNull(),
    /** SHA-256 (hex) of the bytes as received: `external_id` sent again with other bytes is a conflict. */
    receivedSha256: text("received_sha256").notNull(),
    /** SHA-256 (hex) of the decompressed content: the same file again is a duplicate. */
    contentSha256: text("content_sha256").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    errorCode: text("error_code"),
    errorDetail: text("error_detail"),
    /** Every activity made from this file, in order. */
    activityIds: text("activity_ids").array().notNull().default(sql`'{}'::text[]`),
    /** On `duplicate_activity`: the existing activity. */
    duplicateOf: text("duplicate_of"),
    /** Claims so far, each counted as it is made (claim-uploads.ts). */
    attempts: integer("attempts").notNull().default(0),
    /**
     * Claims that ended in an unexpected error the processor caught. A claim whose processor
     * died (the service stopped) counts in `attempts` only: that is no fault of the file's.
     */
    failures: integer("failures").notNull().default(0),
    claimedUntil: timestamp("claimed_until", { withTimezone: true }),
    /**
     * The claim in force (or last made): a processor renews, shortens or gives back only its own,
     * so one whose lease lapsed while another took the upload changes nothing of the other's.
     */
    claimId: text("claim_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("uploads_external_id_idx").on(t.athleteId, t.uploader, t.externalId).where(sql`${t.externalId} is not null`),
    index("uploads_content_idx").on(t.athleteId, t.contentSha256),
    index("uploads_processing_idx").on(t.createdAt).where(sql`${t.status} = 'processing'`),
    // Each athlete's uploads by when they were sent, from which their turns are counted (lib/uploads/claim-uploads.ts).
    index("uploads_athlete_created_idx").on(t.athleteId, t.createdAt),
  ],
);

/**
 * The file as received, byte for byte, kept apart so reading an upload's status never reads its
 * file: a row per piece of at most UPLOAD_FILE_CHUNK_BYTES, `chunk` counting from 0, so the file
 * is written and read one bounded statement at a time (lib/uploads/file-chunks.ts). Files stored
 * whole before the pieces were kept are one row, chunk 0.
 */
export const uploadFiles = pgTable(
  "upload_files",
  {
    uploadId: text("upload_id")
      .notNull()
      .references(() => uploads.id, { onDelete: "cascade" }),
    /**
     * Default 0: a release from before the pieces (0021) stores a file as one row without a
     * chunk, which is the file's chunk 0 to this one; without a default, each of its uploads
     * failed during a rolling deploy or after a rollback. This release always gives the chunk.
     */
    chunk: integer("chunk").notNull().default(0),
    bytes: bytea("bytes").notNull(),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.chunk] })],
);

/**
 * An activity's samples, every channel in one compact value (lib/files/stream-codec.ts): one
 * row per activity, read with one query. `keys` lists the channels it holds.
 * `first_sample_offset_s`: seconds from the activity's start as it is stored (`start_local`, whole
 * seconds, less `utc_offset_s`) to its first sample, from which `time_s` and the laps'
 * `start_offset_s` count; more than 0 where a FIT session starts before its first record. Rows
 * stored before it was kept read 0, what exports assumed until then.
 */
export const activityStreams = pgTable("activity_streams", {
  activityId: text("activity_id")
    .primaryKey()
    .references(() => activities.id, { onDelete: "cascade" }),
  size: integer("size").notNull(),
  keys: text("keys").array().notNull(),
  data: bytea("data").notNull(),
  firstSampleOffsetS: measure("first_sample_offset_s", PRECISION.duration).notNull().default(0),
});

/** An activity's laps from its file (CONTRACT §11); `index` counts from 0. */
export const activityLaps = pgTable(
  "activity_laps",
  {
    activityId: text("activity_id")
      .notNull()
      .references(() => activities.id, { onDelete: "cascade" }),
    index: integer("index").notNull(),
    startOffsetS: measure("start_offset_s", PRECISION.duration).notNull(),
    elapsedTimeS: measure("elapsed_time_s", PRECISION.duration).notNull(),
    movingTimeS: measure("moving_time_s", PRECISION.duration),
    distanceM: measure("distance_m", PRECISION.distance),
    elevationGainM: measure("elevation_gain_m", PRECISION.distance),
    averageSpeedMps: measure("average_speed_mps", PRECISION.speed),
    maxSpeedMps: measure("max_speed_mps", PRECISION.speed),
    averageHeartRateHz: measure("average_heart_rate_hz", PRECISION.heartRate),
    maxHeartRateHz: measure("max_heart_rate_hz", PRECISION.heartRate),
    averagePowerW: measure("average_power_w", PRECISION.power),
  },
  (t) => [primaryKey({ columns: [t.activityId, t.index] })],
);
