import { boolean, index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const users = pgTable("users", {
  id: text("id").primaryKey(),
  /** Stored lower-cased; sign-in compares lower-cased input. */
  email: text("email").notNull().unique(),
  name: text("name"),
  passwordHash: text("password_hash").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const athleteProfiles = pgTable("athlete_profiles", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  timezone: text("timezone").notNull().default("UTC"),
  hasSubscription: boolean("has_subscription").notNull().default(false),
  /** A trial counts as paid until this instant; null means no trial. */
  trialEndsAt: timestamp("trial_ends_at", { withTimezone: true }),
  usesMetricUnits: boolean("uses_metric_units").notNull().default(true),
  connectedIntegrations: text("connected_integrations").array().notNull().default([]),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A console sign-in (CONTRACT §7): the session cookie (an Auth.js JWT) names its row, and the
 * session holds only while the row does. Signing out deletes it, so a copy of the cookie taken
 * before (from a shared computer, a backup, a log) signs nobody in afterwards. `expires_at`
 * slides with use, as the cookie's own expiry does.
 */
export const consoleSessions = pgTable(
  "console_sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("console_sessions_user_idx").on(t.userId)],
);
