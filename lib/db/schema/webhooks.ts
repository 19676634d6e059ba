import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { oauthClients } from "./oauth";

/**
 * An app's subscription. The signing secret is needed to sign, so it is stored sealed
 * (AES-256-GCM), not hashed; it leaves the service only in the create and rotate answers.
 */
export const webhookSubscriptions = pgTable(
  "webhook_subscriptions",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.clientId, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    status: text("status", { enum: ["active", "disabled"] }).notNull().default("active"),
    secretSealed: text("secret_sealed").notNull(),
    /** After a rotation the old secret also signs until this instant (24 hours). */
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: timestamp("previous_secret_expires_at", { withTimezone: true }),
    /**
     * The `verify_token` the app chose (creation, or an update that sent one), sealed: every later
     * handshake (a new URL, re-enabling) sends it again, so an endpoint that checks it can be
     * re-enabled from the console. Null when the app chose none: each handshake generates one.
     */
    verifyTokenSealed: text("verify_token_sealed"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    /** When the current streak of failures began; null while healthy. */
    failingSince: timestamp("failing_since", { withTimezone: true }),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
    disabledReason: text("disabled_reason"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("webhook_subscriptions_client_idx").on(t.clientId)],
);

/** One event for one subscription. `pending` until it succeeds or fails for good. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    subscriptionId: text("subscription_id")
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    /** The event's outbox position, for ordering and for "redeliver the failed streak". */
    eventSeq: bigint("event_seq", { mode: "number" }).notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull().default("pending"),
    attemptCount: integer("attempt_count").notNull().default(0),
    /**
     * `attempt_count` when the delivery was last queued again (redeliver, re-enable): its retries
     * count from there, so one sent again gets the whole schedule, whatever it used before.
     */
    requeuedAtAttempt: integer("requeued_at_attempt").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * Why a `failed` delivery failed: its attempts ran out, its subscription was disabled (after
     * 20 failures or by the developer), or the athlete disconnected the app before it was sent.
     * Null otherwise (a delivery queued again, or succeeded, has none).
     */
    failureReason: text("failure_reason", { enum: ["attempts_exhausted", "subscription_disabled", "athlete_disconnected"] }),
    /** A worker holds the delivery until this instant; a crashed worker's hold simply lapses. */
    lockedUntil: timestamp("locked_until", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // One delivery per event and subscription (an event's seq stands for it one to one), and the
    // delivery log's order, newest event first: one index where two cost every write.
    uniqueIndex("webhook_deliveries_sub_seq_idx").on(t.subscriptionId, t.eventSeq),
    // Every claim looks up, per subscription, its pending deliveries oldest first (what is due,
    // or a failing one's probe) and those in flight (the cap), whatever its backlog. Nothing
    // reads pending deliveries by due time alone, so no index on it costs every insert.
    index("webhook_deliveries_pending_sub_seq_idx").on(t.subscriptionId, t.eventSeq).where(sql`${t.status} = 'pending'`),
    // The deliveries a worker holds (policy.ts `leased`), whatever their status: one withdrawn or
    // failed while its attempt is out is still in flight until that attempt is recorded.
    index("webhook_deliveries_held_sub_lock_idx").on(t.subscriptionId, t.lockedUntil).where(sql`${t.lockedUntil} is not null`),
  ],
);

/** Every attempt, as sent and as answered (or why nothing was answered). */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    durationMs: integer("duration_ms").notNull(),
    outcome: text("outcome", { enum: ["response", "not_sent"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBodyExcerpt: text("response_body_excerpt"),
    /** For not_sent: dns, connection_refused, tls, timeout, blocked_address, … */
    error: text("error"),
    requestHeaders: jsonb("request_headers").notNull(),
    requestBody: text("request_body").notNull(),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);
