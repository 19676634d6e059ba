import { sql } from "drizzle-orm";
import { doublePrecision, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { measure, PRECISION } from "./measure";
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
    distanceM: measure("distance_m", PRECISION.distance),
    elevationGainM: measure("elevation_gain_m", PRECISION.distance),
    averageSpeedMps: measure("average_speed_mps", PRECISION.speed),
    maxSpeedMps: measure("max_speed_mps", PRECISION.speed),
    averageHeartRateHz: measure("average_heart_rate_hz", PRECISION.heartRate),
    maxHeartRateHz: measure("max_heart_rate_hz", PRECISION.heartRate),
    averagePowerW: measure("average_power_w", PRECISION.power),
    energyJ: measure("energy_j", PRECISION.energy),
    source: text("source").notNull().default("manual"),
    /**
     * The upload it was read from (files.ts), for export and delete; null for one recorded by
     * hand. No foreign key: `uploads` is declared after this table and refers to it.
     */
    uploadId: text("upload_id"),
    /**
     * For one read from a file: `start_local` less the instant the file recorded, in seconds
     * (the UTC offset of the athlete's timezone then), so exports give that instant back
     * whatever the timezone says later and in the repeated hour of a change from summer time.
     * Null for one recorded by hand, whose instant is read against the athlete's timezone.
     */
    utcOffsetS: integer("utc_offset_s"),
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
