import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, columnsOf, compiledStatement, notBefore, perDatabase, rowsAs, selectAs, type Db } from "../db/client";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { newId } from "../ids";
import { withControlsShown } from "../text";
import type { OutboundResult } from "./outbound";
import { afterFailure, deliverable, MAX_ATTEMPTS } from "./policy";
import { ATTEMPT_INTERRUPTED } from "./subscriptions/schemas";

export type AttemptRecorded = {
  /** The delivery's status after this attempt. */
  status: "pending" | "succeeded" | "failed";
  attempt: number;
  /** When the next attempt is due, for a delivery still pending. */
  nextAttemptAt: Date | null;
  subscriptionDisabled: boolean;
  /** The subscription was failing and this success ended the streak. */
  subscriptionRecovered: boolean;
};

/** One attempt as sent and as answered (or why nothing was sent). */
export type Attempt = {
  deliveryId: string;
  subscriptionId: string;
  startedAt: Date;
  requestHeaders: Record<string, string>;
  requestBody: string;
  result: OutboundResult;
  /** Claimed as the failing subscription's probe (ClaimedDelivery.probe). */
  probe: boolean;
  schedule?: readonly number[];
  random?: () => number;
};

export type Success = Extract<OutboundResult, { outcome: "response" }>;

export function isSuccess(r: OutboundResult): r is Success {
  return r.outcome === "response" && r.status >= 200 && r.status < 300;
}

/**
 * Records one attempt and its consequences, atomically (CONTRACT §4, §7): the attempt row as
 * sent and as answered; on a 2xx the delivery succeeds and the subscription's failure streak
 * ends; otherwise the streak grows (policy.ts says when a failure counts), the delivery is
 * rescheduled by the retry policy or fails after its last attempt, and at 20 consecutive
 * failures the subscription is disabled and every pending delivery of it fails. Null when the
 * delivery was deleted meanwhile (with its subscription).
 *
 * Successes are recorded in batches (group commit): while one batch's statement runs, the
 * successes that arrive meanwhile queue for the next, so a lone attempt waits for nothing and
 * a busy runner makes one round trip for many.
 */
export function recordAttempt(db: Db, a: Attempt): Promise<AttemptRecorded | null> {
  if (!isSuccess(a.result)) return recordFailure(db, a);
  return successBatcher(db)({ ...a, result: a.result });
}

/** Successes recorded by one statement at most. */
const MAX_SUCCESS_BATCH = 200;
type SuccessItem = Attempt & { result: Success };

const successBatcher = perDatabase((db: Db) => {
  let queue: { a: SuccessItem; done: (r: AttemptRecorded | null) => void; fail: (e: unknown) => void }[] = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (queue.length) {
      const batch = queue.slice(0, MAX_SUCCESS_BATCH);
      queue = queue.slice(batch.length);
      try {
        const recorded = await recordSuccesses(db, batch.map((b) => b.a));
        for (const b of batch) b.done(recorded.get(b.a.deliveryId) ?? null);
      } catch (err) {
        for (const b of batch) b.fail(err);
      }
    }
    flushing = false;
  };
  return (a: SuccessItem) =>
    new Promise<AttemptRecorded | null>((done, fail) => {
      queue.push({ a, done, fail });
      if (!flushing) void flush();
    });
});

async function recordFailure(db: Db, a: Attempt): Promise<AttemptRecorded | null> {
  return db.transaction(async (tx) => {
    // The subscription before its delivery (policy.ts, "Lock order").
    const [sub] = await tx
      .select({ status: webhookSubscriptions.status, consecutiveFailures: webhookSubscriptions.consecutiveFailures })
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.id, a.subscriptionId))
      .for("no key update");
    const [d] = await tx
      .select({ status: webhookDeliveries.status, attemptCount: webhookDeliveries.attemptCount, requeuedAtAttempt: webhookDeliveries.requeuedAtAttempt })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, a.deliveryId))
      .for("no key update");
    if (!d) return null;
    const attempt = d.attemptCount + 1;
    await tx.insert(webhookAttempts).values({
      id: newId("wha"),
      deliveryId: a.deliveryId,
      attempt,
      startedAt: a.startedAt,
      durationMs: a.result.durationMs,
      outcome: a.result.outcome,
      responseStatus: a.result.outcome === "response" ? a.result.status : null,
      responseBodyExcerpt: a.result.outcome === "response" ? withControlsShown(a.result.bodyExcerpt) : null,
      error: a.result.outcome === "not_sent" ? a.result.error : null,
      requestHeaders: a.requestHeaders,
      requestBody: a.requestBody,
    });
    const next = afterFailure({
      attempt: attempt - d.requeuedAtAttempt,
      subscription: sub ?? null,
      probe: a.probe,
      delivered: d.status === "succeeded",
      schedule: a.schedule,
      random: a.random,
    });
    if (next.countsTowardsStreak) {
      await tx
        .update(webhookSubscriptions)
        .set({
          consecutiveFailures: next.streak,
          failingSince: sql`coalesce(${webhookSubscriptions.failingSince}, now())`,
          updatedAt: sql`now()`,
        })
        .where(eq(webhookSubscriptions.id, a.subscriptionId));
    }
    const done = { attempt, nextAttemptAt: null, subscriptionDisabled: false, subscriptionRecovered: false };
    if (next.disable) {
      const last = a.result.outcome === "response" ? `HTTP ${a.result.status}` : a.result.error;
      await tx
        .update(webhookSubscriptions)
        .set({ status: "disabled", disabledAt: sql`now()`, updatedAt: sql`now()`, disabledReason: `${next.streak} consecutive failed deliveries (last: ${last})` })
        .where(eq(webhookSubscriptions.id, a.subscriptionId));
      await tx.update(webhookDeliveries).set({ attemptCount: attempt }).where(eq(webhookDeliveries.id, a.deliveryId));
      await tx
        .update(webhookDeliveries)
        .set({ status: "failed", failureReason: "subscription_disabled", updatedAt: sql`now()` })
        .where(and(eq(webhookDeliveries.subscriptionId, a.subscriptionId), eq(webhookDeliveries.status, "pending")));
      // This attempt is over; the others of the subscription still out keep their leases until they record.
      await tx.update(webhookDeliveries).set({ lockedUntil: null }).where(eq(webhookDeliveries.id, a.deliveryId));
      return { ...done, status: "failed", subscriptionDisabled: true };
    }
    if (d.status !== "pending") {
      // Already settled elsewhere (a disable, a withdrawal, or a duplicate send that succeeded):
      // only count, and end the lease the attempt held.
      await tx.update(webhookDeliveries).set({ attemptCount: attempt, lockedUntil: null, updatedAt: sql`now()` }).where(eq(webhookDeliveries.id, a.deliveryId));
      return { ...done, status: d.status };
    }
    if (next.retryInS === null) {
      await tx
        .update(webhookDeliveries)
        .set({ status: "failed", failureReason: "attempts_exhausted", attemptCount: attempt, lockedUntil: null, updatedAt: sql`now()` })
        .where(eq(webhookDeliveries.id, a.deliveryId));
      return { ...done, status: "failed" };
    }
    const [retry] = await tx
      .update(webhookDeliveries)
      .set({ attemptCount: attempt, nextAttemptAt: sql`now() + make_interval(secs => ${next.retryInS})`, lockedUntil: null, updatedAt: sql`now()` })
      .where(eq(webhookDeliveries.id, a.deliveryId))
      .returning({ nextAttemptAt: webhookDeliveries.nextAttemptAt });
    return { ...done, status: "pending", nextAttemptAt: notBefore(retry!.nextAttemptAt) };
  });
}

// Typed SQL for the batch statement: every column comes from the schema.
const w = alias(webhookDeliveries, "w");
const ws = alias(webhookSubscriptions, "ws");
const wl = alias(webhookDeliveries, "wl");
const ls = alias(webhookSubscriptions, "ls");

/**
 * Records successful attempts, any number in one statement (one round trip, atomic on its
 * own, the same SQL whatever the count): each attempt row, its delivery's success, and the
 * end of its subscription's failure streak if there was one.
 */
async function recordSuccesses(db: Db, items: readonly SuccessItem[]): Promise<Map<string, AttemptRecorded | null>> {
  const out = new Map<string, AttemptRecorded | null>(items.map((i) => [i.deliveryId, null]));
  const input = JSON.stringify(
    items.map((i) => ({
      delivery_id: i.deliveryId,
      attempt_id: newId("wha"),
      started_at: i.startedAt.toISOString(),
      duration_ms: i.result.durationMs,
      status: i.result.status,
      excerpt: withControlsShown(i.result.bodyExcerpt),
      headers: i.requestHeaders,
      body: i.requestBody,
    })),
  );
  const rows = rowsAs(recordedSuccessColumns, await recordSuccessesStatement(db, { input }));
  // One success per subscription ends its streak; the others in the batch are plain successes.
  const recoveredOnce = new Set<string>();
  for (const r of rows) {
    const recovered = r.recovered && !recoveredOnce.has(r.subscription_id);
    if (recovered) recoveredOnce.add(r.subscription_id);
    out.set(r.id, { status: "succeeded", attempt: Number(r.attempt), nextAttemptAt: null, subscriptionDisabled: false, subscriptionRecovered: recovered });
  }
  return out;
}

const A = webhookAttempts;
/** The deliveries `recordSuccessesStatement` marked succeeded (its CTE `d`). */
const succeededColumns = { id: w.id, subscription_id: w.subscriptionId, attempt_count: w.attemptCount };
const succeeded = columnsOf("d", succeededColumns);
/** What it answers for each. */
const recordedSuccessColumns = {
  id: succeeded.id,
  subscription_id: succeeded.subscription_id,
  attempt: succeeded.attempt_count,
  // Computed: whether this success ended its subscription's failure streak (the CTE `s`).
  recovered: sql<boolean>`${succeeded.subscription_id} in (select id from s)`,
};
export const recordSuccessesStatement = compiledStatement(
  "webhook_record_successes",
  () => sql`
    with i as (
      select * from json_to_recordset(${sql.placeholder("input")}::json) as x(delivery_id text, attempt_id text,
        started_at timestamptz, duration_ms int, status int, excerpt text, headers jsonb, body text)),
    -- The failing subscriptions whose streak these successes end, locked before any of their
    -- deliveries (policy.ts, "Lock order"), in one order for every batch. Only failing ones:
    -- a healthy subscription's row is not touched, so a busy one is not a point of contention.
    locked as (
      select ${ls.id} as id from ${webhookSubscriptions} ${ls}
      where ${ls.id} in (select ${wl.subscriptionId} from ${webhookDeliveries} ${wl} where ${wl.id} = any(array(select delivery_id from i)))
        and ${deliverable(ls)} and (${ls.consecutiveFailures} > 0 or ${ls.failingSince} is not null)
      order by ${ls.id}
      for no key update of ${ls}),
    d as (
      update ${webhookDeliveries} ${w}
      set ${bareColumn(webhookDeliveries.status)} = 'succeeded', ${bareColumn(webhookDeliveries.failureReason)} = null, ${bareColumn(webhookDeliveries.attemptCount)} = ${w.attemptCount} + 1,
        ${bareColumn(webhookDeliveries.lockedUntil)} = null, ${bareColumn(webhookDeliveries.updatedAt)} = now()
      -- The key list as an array too: joined to the recordset alone, whose size the planner
      -- takes for 100 rows, the table was read whole while it had fewer than some 20,000.
      from i where ${w.id} = i.delivery_id and ${w.id} = any(array(select delivery_id from i))
        -- An init plan: the locks above are taken before the first delivery is.
        and (select count(*) from locked) >= 0
      returning ${selectAs(succeededColumns)}),
    a as (
      insert into ${A} (${bareColumn(A.id)}, ${bareColumn(A.deliveryId)}, ${bareColumn(A.attempt)}, ${bareColumn(A.startedAt)}, ${bareColumn(A.durationMs)}, ${bareColumn(A.outcome)},
        ${bareColumn(A.responseStatus)}, ${bareColumn(A.responseBodyExcerpt)}, ${bareColumn(A.error)}, ${bareColumn(A.requestHeaders)}, ${bareColumn(A.requestBody)})
      select i.attempt_id, d.id, d.attempt_count, i.started_at, i.duration_ms, 'response', i.status, i.excerpt, null, i.headers, i.body
      from d join i on i.delivery_id = d.id),
    s as (
      update ${webhookSubscriptions} ${ws}
      set ${bareColumn(webhookSubscriptions.consecutiveFailures)} = 0, ${bareColumn(webhookSubscriptions.failingSince)} = null, ${bareColumn(webhookSubscriptions.updatedAt)} = now()
      where ${ws.id} in (select id from locked) and ${ws.id} in (select subscription_id from d)
      returning ${ws.id} as id)
    select ${selectAs(recordedSuccessColumns)} from d`,
);

/** What `recordInterrupted` answers for each delivery it recorded. */
const interruptedColumns = { id: w.id, attempt_count: w.attemptCount, status: w.status };

/**
 * Records the attempts that lapsed claims cut short, as the claim that takes each delivery
 * again finds them (claim-deliveries.ts): a worker claimed the delivery and died, or could not
 * record what happened, perhaps after the endpoint had the request. Each goes to the log as an
 * attempt, `not_sent` with `error` "interrupted", started when it was claimed and lasting until
 * its lease ran out; what was sent is not known, so its request is left empty. It counts as an
 * attempt (a delivery whose sending kills its worker each time fails after MAX_ATTEMPTS, as
 * `attempts_exhausted`) but not towards its subscription's failure streak: nothing says the
 * endpoint failed.
 *
 * One statement for all of them. A delivery whose count moved since the claim read it (its
 * worker was only slow, and recorded the attempt just now) is left as it is. A worker that was
 * only slow and records later still adds its own record: the log then shows that one request
 * twice, first as interrupted. Returns each recorded delivery's new attempt count and status.
 */
export async function recordInterrupted(
  db: Db,
  items: readonly { deliveryId: string; attemptCount: number; claimedAt: Date; lapsedAt: Date }[],
): Promise<Map<string, { attemptCount: number; status: "pending" | "failed" }>> {
  const input = JSON.stringify(
    items.map((i) => ({
      delivery_id: i.deliveryId,
      attempt_id: newId("wha"),
      attempt_count: i.attemptCount,
      started_at: i.claimedAt.toISOString(),
      duration_ms: Math.max(0, Math.round(i.lapsedAt.getTime() - i.claimedAt.getTime())),
    })),
  );
  // The last of its attempts (counted since it was last queued again, as afterFailure counts)
  // fails it, as a failed last attempt would: nothing says the endpoint failed, but a delivery
  // whose sending kills its worker every time must end.
  const last = sql`${w.attemptCount} + 1 - ${w.requeuedAtAttempt} >= ${MAX_ATTEMPTS}`;
  const rows = rowsAs(
    interruptedColumns,
    await db.execute(sql`
      with i as (
        select * from json_to_recordset(${input}::json) as x(delivery_id text, attempt_id text, attempt_count int, started_at timestamptz, duration_ms int)),
      d as (
        update ${webhookDeliveries} ${w}
        set ${bareColumn(webhookDeliveries.attemptCount)} = ${w.attemptCount} + 1,
          ${bareColumn(webhookDeliveries.status)} = case when ${last} then 'failed' else ${w.status} end,
          ${bareColumn(webhookDeliveries.failureReason)} = case when ${last} then 'attempts_exhausted' else ${w.failureReason} end,
          ${bareColumn(webhookDeliveries.lockedUntil)} = case when ${last} then null else ${w.lockedUntil} end
        from i where ${w.id} = i.delivery_id and ${w.status} = 'pending' and ${w.attemptCount} = i.attempt_count
        returning ${selectAs(interruptedColumns)}),
      a as (
        insert into ${A} (${bareColumn(A.id)}, ${bareColumn(A.deliveryId)}, ${bareColumn(A.attempt)}, ${bareColumn(A.startedAt)}, ${bareColumn(A.durationMs)}, ${bareColumn(A.outcome)},
          ${bareColumn(A.responseStatus)}, ${bareColumn(A.responseBodyExcerpt)}, ${bareColumn(A.error)}, ${bareColumn(A.requestHeaders)}, ${bareColumn(A.requestBody)})
        select i.attempt_id, d.id, d.attempt_count, i.started_at, i.duration_ms, 'not_sent', null, null, ${ATTEMPT_INTERRUPTED}, '{}'::jsonb, ''
        from d join i on i.delivery_id = d.id)
      select id, attempt_count, status from d`),
  );
  // The statement takes only pending deliveries, and leaves each pending or fails it.
  return new Map(rows.map((r) => [r.id, { attemptCount: Number(r.attempt_count), status: r.status as "pending" | "failed" }]));
}
