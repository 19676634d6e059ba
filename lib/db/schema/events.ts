import { sql } from "drizzle-orm";
import { bigserial, customType, index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/** A 64-bit transaction id (PostgreSQL's `xid8`), as its decimal text. */
const xid8 = customType<{ data: string; driverData: string }>({
  dataType: () => "xid8",
  fromDriver: (v) => String(v),
});

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
    /**
     * The transaction that wrote it. `seq` is taken at the insert, not at the commit, so a
     * transaction can commit an event behind one already read; one that lists events after a
     * position (`/v1/app/events`) reads them in (xact, seq) order and only those of transactions
     * older than every one still running (lib/app-events/list-app-events.ts).
     */
    xact: xid8("xact")
      .notNull()
      .default(sql`pg_current_xact_id()`),
  },
  (t) => [
    index("events_athlete_idx").on(t.athleteId, t.seq),
    index("events_occurred_idx").on(t.occurredAt),
    index("events_xact_idx").on(t.xact, t.seq),
    // Fan-out takes the oldest events not yet fanned out; without this it would walk every
    // event ever written to find them.
    index("events_unfanned_idx").on(t.seq).where(sql`${t.fannedOutAt} is null`),
  ],
);
