import { sql } from "drizzle-orm";
import { doublePrecision, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "./people";

/** `start_local` is wall-clock time without an offset, read against the athlete's timezone. */
export const activities = pgTable(
  "activities",
  {
    id: text("id").primaryKey(),
    athleteId: text("athlete_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    sportType: text("sport_type").notNull(),
    startLocal: timestamp("start_local", { withTimezone: false, mode: "string" }).notNull(),
    elapsedTimeS: integer("elapsed_time_s").notNull(),
    movingTimeS: integer("moving_time_s"),
    distanceM: doublePrecision("distance_m"),
    elevationGainM: doublePrecision("elevation_gain_m"),
    averageSpeedMps: doublePrecision("average_speed_mps"),
    maxSpeedMps: doublePrecision("max_speed_mps"),
    averageHeartRateHz: doublePrecision("average_heart_rate_hz"),
    maxHeartRateHz: doublePrecision("max_heart_rate_hz"),
    averagePowerW: doublePrecision("average_power_w"),
    energyJ: doublePrecision("energy_j"),
    source: text("source").notNull().default("manual"),
    /**
     * The upload it was read from (files.ts), for export and delete; null for one recorded by
     * hand. No foreign key: `uploads` is declared after this table and refers to it.
     */
    uploadId: text("upload_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  // Serves every list: one athlete, newest first, keyset on (start_local, id).
  (t) => [index("activities_athlete_start_idx").on(t.athleteId, sql`${t.startLocal} desc`, sql`${t.id} desc`)],
);

export const metrics = pgTable(
  "metrics",
  {
    id: text("id").primaryKey(),
    athleteId: text("athlete_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    value: doublePrecision("value").notNull(),
    measuredLocal: timestamp("measured_local", { withTimezone: false, mode: "string" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("metrics_athlete_measured_idx").on(t.athleteId, sql`${t.measuredLocal} desc`, sql`${t.id} desc`)],
);
