import { sql } from "drizzle-orm";
import { bigserial, index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The outbox: every write that changes athlete data appends its event here in the same
 * transaction, so an event exists exactly when its change committed. `seq` orders them.
 */
export const events = pgTable(
  "events",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    id: text("id").notNull().unique(),
    type: text("type").notNull(),
    athleteId: text("athlete_id").notNull(),
    objectId: text("object_id").notNull(),
    objectType: text("object_type").notNull(),
    /** For events meant for one app only (athlete.deauthorized). */
    clientId: text("client_id"),
    occurredAt: timestamp("occurred_at", { withTimezone: true }).notNull().defaultNow(),
    /** Set once fan-out has turned the event into deliveries. */
    fannedOutAt: timestamp("fanned_out_at", { withTimezone: true }),
  },
  (t) => [
    index("events_athlete_idx").on(t.athleteId, t.seq),
    index("events_occurred_idx").on(t.occurredAt),
    // Fan-out takes the oldest events not yet fanned out; without this it would walk every
    // event ever written to find them.
    index("events_unfanned_idx").on(t.seq).where(sql`${t.fannedOutAt} is null`),
  ],
);
