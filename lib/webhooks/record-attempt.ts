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
 * disabled and every pending delivery of it fails.
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
    schedule?: readonly number[];
    random?: () => number;
  },
): Promise<AttemptRecorded | null> {
  const ok = a.result.outcome === "response" && a.result.status >= 200 && a.result.status < 300;
  if (ok && a.result.outcome === "response") {
    // The common case in one statement (one round trip, atomic on its own): the attempt, the
    // delivery's success, and the end of a failure streak if there was one.
    const [r] = rowsOf<{ attempt: number | null; recovered: number }>(
      await db.execute(sql`
        with d as (
          update webhook_deliveries
          set status = 'succeeded', attempt_count = attempt_count + 1, locked_until = null, updated_at = now()
          where id = ${a.deliveryId}
          returning id, attempt_count),
        a as (
          insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, outcome, response_status,
            response_body_excerpt, error, request_headers, request_body)
          select ${newId("wha")}, d.id, d.attempt_count, ${a.startedAt.toISOString()}::timestamptz, ${a.result.durationMs},
            'response', ${a.result.status}, ${excerpt(a.result.bodyExcerpt)}, null, ${JSON.stringify(a.requestHeaders)}::jsonb, ${a.requestBody}
          from d),
        s as (
          update webhook_subscriptions set consecutive_failures = 0, failing_since = null, updated_at = now()
          where id = ${a.subscriptionId} and status = 'active' and (consecutive_failures > 0 or failing_since is not null)
            and exists (select 1 from d)
          returning id)
        select (select attempt_count from d) as attempt, (select count(*) from s)::int as recovered`),
    );
    if (!r || r.attempt === null) return null; // deleted with its subscription meanwhile
    return { status: "succeeded", attempt: r.attempt, nextAttemptAt: null, subscriptionDisabled: false, subscriptionRecovered: r.recovered > 0 };
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

    const [sub] = rowsOf<{ consecutive_failures: number }>(
      await tx.execute(sql`
        update webhook_subscriptions
        set consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, now()), updated_at = now()
        where id = ${a.subscriptionId} and status = 'active'
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

/** PostgreSQL text cannot hold NUL. */
function excerpt(body: string): string {
  return body.replaceAll("\u0000", "");
}
