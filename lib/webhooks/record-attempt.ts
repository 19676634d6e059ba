import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";
import { webhookAttempts } from "../db/schema";
import { newId } from "../ids";
import type { OutboundResult } from "./outbound";
import { notBefore } from "./claim-deliveries";
import { DISABLE_AFTER_FAILURES, retryDelayS } from "./retry-policy";

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

/**
 * Records one attempt and its consequences in one transaction (CONTRACT §4, §7): the attempt
 * row as sent and as answered; on a 2xx the delivery succeeds and the subscription's failure
 * streak ends; otherwise the streak grows, the delivery is rescheduled by the retry policy
 * (or fails after its last attempt), and at 20 consecutive failures the subscription is
 * disabled and every pending delivery of it fails. A failure counts towards the streak when it
 * starts one or when it is the probe of a subscription already failing.
 */
export async function recordAttempt(
  db: Db,
  a: {
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
  },
): Promise<AttemptRecorded | null> {
  if (isSuccess(a.result)) {
    return (await recordSuccesses(db, [{ ...a, result: a.result }])).get(a.deliveryId) ?? null;
  }
  return db.transaction(async (tx) => {
    const [d] = rowsOf<{ status: "pending" | "succeeded" | "failed"; attempt_count: number }>(
      await tx.execute(sql`select status, attempt_count from webhook_deliveries where id = ${a.deliveryId} for update`),
    );
    if (!d) return null; // deleted with its subscription meanwhile
    const attempt = d.attempt_count + 1;
    await tx.insert(webhookAttempts).values({
      id: newId("wha"),
      deliveryId: a.deliveryId,
      attempt,
      startedAt: a.startedAt,
      durationMs: a.result.durationMs,
      outcome: a.result.outcome,
      responseStatus: a.result.outcome === "response" ? a.result.status : null,
      responseBodyExcerpt: a.result.outcome === "response" ? excerpt(a.result.bodyExcerpt) : null,
      error: a.result.outcome === "not_sent" ? a.result.error : null,
      requestHeaders: a.requestHeaders,
      requestBody: a.requestBody,
    });

    // The first failure starts the streak; after that only the probe counts. Deliveries that
    // were already in flight beside the first failure are logged and retried, but do not each
    // add to the streak: from its first failure a subscription is probed one at a time.
    const [sub] = rowsOf<{ consecutive_failures: number }>(
      await tx.execute(sql`
        update webhook_subscriptions
        set consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, now()), updated_at = now()
        where id = ${a.subscriptionId} and status = 'active' and (consecutive_failures = 0 or ${a.probe})
        returning consecutive_failures`),
    );
    if (sub && sub.consecutive_failures >= DISABLE_AFTER_FAILURES) {
      const last = a.result.outcome === "response" ? `HTTP ${a.result.status}` : a.result.error;
      await tx.execute(sql`
        update webhook_subscriptions
        set status = 'disabled', disabled_at = now(), updated_at = now(),
          disabled_reason = ${`${sub.consecutive_failures} consecutive failed deliveries (last: ${last})`}
        where id = ${a.subscriptionId}`);
      await tx.execute(sql`update webhook_deliveries set attempt_count = ${attempt} where id = ${a.deliveryId}`);
      await tx.execute(sql`
        update webhook_deliveries set status = 'failed', locked_until = null, updated_at = now()
        where subscription_id = ${a.subscriptionId} and status = 'pending'`);
      return { status: "failed", attempt, nextAttemptAt: null, subscriptionDisabled: true, subscriptionRecovered: false };
    }

    if (d.status !== "pending") {
      // Already settled elsewhere (a disable, or a duplicate send that succeeded): only count.
      await tx.execute(sql`update webhook_deliveries set attempt_count = ${attempt}, updated_at = now() where id = ${a.deliveryId}`);
      return { status: d.status, attempt, nextAttemptAt: null, subscriptionDisabled: false, subscriptionRecovered: false };
    }
    const delay = retryDelayS(attempt, a.schedule, a.random);
    if (delay === null) {
      await tx.execute(sql`
        update webhook_deliveries set status = 'failed', attempt_count = ${attempt}, locked_until = null, updated_at = now()
        where id = ${a.deliveryId}`);
      return { status: "failed", attempt, nextAttemptAt: null, subscriptionDisabled: false, subscriptionRecovered: false };
    }
    const [next] = rowsOf<{ next_attempt_at: string | Date }>(
      await tx.execute(sql`
        update webhook_deliveries
        set attempt_count = ${attempt}, next_attempt_at = now() + make_interval(secs => ${delay}), locked_until = null, updated_at = now()
        where id = ${a.deliveryId}
        returning next_attempt_at`),
    );
    return { status: "pending", attempt, nextAttemptAt: notBefore(next!.next_attempt_at), subscriptionDisabled: false, subscriptionRecovered: false };
  });
}

export type Success = Extract<OutboundResult, { outcome: "response" }>;

export function isSuccess(r: OutboundResult): r is Success {
  return r.outcome === "response" && r.status >= 200 && r.status < 300;
}

/**
 * Records successful attempts, any number in one statement (one round trip, atomic on its
 * own, the same SQL whatever the count): each attempt row, its delivery's success, and the
 * end of its subscription's failure streak if there was one. A delivery deleted meanwhile
 * (with its subscription) maps to null.
 */
export async function recordSuccesses(
  db: Db,
  items: readonly { deliveryId: string; subscriptionId: string; startedAt: Date; requestHeaders: Record<string, string>; requestBody: string; result: Success }[],
): Promise<Map<string, AttemptRecorded | null>> {
  const out = new Map<string, AttemptRecorded | null>(items.map((i) => [i.deliveryId, null]));
  if (!items.length) return out;
  const input = JSON.stringify(
    items.map((i) => ({
      delivery_id: i.deliveryId,
      subscription_id: i.subscriptionId,
      attempt_id: newId("wha"),
      started_at: i.startedAt.toISOString(),
      duration_ms: i.result.durationMs,
      status: i.result.status,
      excerpt: excerpt(i.result.bodyExcerpt),
      headers: i.requestHeaders,
      body: i.requestBody,
    })),
  );
  const rows = rowsOf<{ id: string; attempt: number; recovered: boolean }>(
    await db.execute(sql`
      with i as (
        select * from json_to_recordset(${input}::json) as x(delivery_id text, subscription_id text, attempt_id text,
          started_at timestamptz, duration_ms int, status int, excerpt text, headers jsonb, body text)),
      d as (
        update webhook_deliveries w
        set status = 'succeeded', attempt_count = w.attempt_count + 1, locked_until = null, updated_at = now()
        from i where w.id = i.delivery_id
        returning w.id, w.subscription_id, w.attempt_count),
      a as (
        insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, outcome, response_status,
          response_body_excerpt, error, request_headers, request_body)
        select i.attempt_id, d.id, d.attempt_count, i.started_at, i.duration_ms, 'response', i.status, i.excerpt, null, i.headers, i.body
        from d join i on i.delivery_id = d.id),
      s as (
        update webhook_subscriptions
        set consecutive_failures = 0, failing_since = null, updated_at = now()
        where id in (select subscription_id from d) and status = 'active' and (consecutive_failures > 0 or failing_since is not null)
        returning id)
      select d.id, d.attempt_count as attempt, d.subscription_id in (select id from s) as recovered from d`),
  );
  // One success per subscription ends its streak; the others in the batch are plain successes.
  const recoveredOnce = new Set<string>();
  const subOf = new Map(items.map((i) => [i.deliveryId, i.subscriptionId]));
  for (const r of rows) {
    const sub = subOf.get(r.id)!;
    const recovered = r.recovered && !recoveredOnce.has(sub);
    if (recovered) recoveredOnce.add(sub);
    out.set(r.id, { status: "succeeded", attempt: Number(r.attempt), nextAttemptAt: null, subscriptionDisabled: false, subscriptionRecovered: recovered });
  }
  return out;
}

/** PostgreSQL text cannot hold NUL. */
function excerpt(body: string): string {
  return body.replaceAll("\u0000", "");
}
