import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createActivity } from "../activities/create-activity";
import { rowsOf, type Db } from "../db/client";
import { webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { inWriteCtx } from "../http/operation";
import { setupApi } from "../testing/fixtures";
import { webhookRows } from "../testing/webhook-rows";
import { claimDueDeliveries } from "./claim-deliveries";
import { fanOutEvents } from "./fan-out";
import type { OutboundResult } from "./outbound";
import { recordAttempt } from "./record-attempt";
import { updateSubscription } from "./subscriptions/update-subscription";

// Every writer that locks a subscription and some of its deliveries takes the subscription
// first (policy.ts, "Lock order"). A developer's disable (update-subscription.ts) locks the
// subscription and then fails its pending deliveries; an attempt's record used to lock its
// delivery and then the subscription, so the two could each wait for the other: PostgreSQL
// ended one with "deadlock detected", a 500 for the developer or a record lost.
//
// Holding the disable open while the record runs needs two connections at once: PostgreSQL's
// pool has them, the embedded database has one connection and runs transactions in turn.

const api = setupApi();
const rows = webhookRows(api.db);

/** A subscription with one delivery claimed by a runner, as it is while its attempt is answered. */
async function claimedDelivery({ failing }: { failing: boolean }) {
  const athlete = await api.person();
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  const sub = await rows.subscribe(clientId, "http://127.0.0.1:9/hook", ["activity.created"], failing ? { consecutiveFailures: 3, failingSince: new Date() } : {});
  const db = await api.db();
  await inWriteCtx({ db, actor: { kind: "session", userId: athlete.id } }, (ctx) =>
    createActivity({ ctx, athleteId: athlete.id, input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }),
  );
  while ((await fanOutEvents(db)).events > 0);
  // Other tests' deliveries may be due too: claim until this subscription's is among them.
  for (let i = 0; i < 100; i++) {
    const mine = (await claimDueDeliveries(db, { limit: 100 })).find((d) => d.subscriptionId === sub.id);
    if (mine) return { clientId, sub, delivery: mine };
  }
  throw new Error("the delivery was never claimed");
}

const answered = (status: number): OutboundResult => ({
  outcome: "response",
  status,
  contentType: null,
  bodyExcerpt: "",
  bodyComplete: true,
  bodyError: null,
  cacheControl: null,
  expires: null,
  durationMs: 1,
});

async function waitingOnALock(db: Db): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    const [w] = rowsOf<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
    );
    if (w!.n > 0) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

describe.runIf(process.env.TEST_DATABASE_URL)("an attempt recorded while the developer disables its subscription", () => {
  for (const [what, failing, status, settled] of [
    ["a failure", false, 503, "failed"],
    ["a success that ends the subscription's streak", true, 204, "succeeded"],
  ] as const) {
    it(`${what}: both finish, neither is ended as a deadlock`, async () => {
      const { clientId, sub, delivery } = await claimedDelivery({ failing });
      const db = await api.db();
      let recording: Promise<unknown> | undefined;
      await inWriteCtx({ db, actor: { kind: "app", clientId } }, async (ctx) => {
        // The disable's transaction holds the subscription (as loadSubscription's forUpdate does)...
        await ctx.db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id)).for("update");
        // ...when the attempt's answer is recorded,
        recording = recordAttempt(db, {
          deliveryId: delivery.id,
          subscriptionId: sub.id,
          startedAt: new Date(),
          requestHeaders: {},
          requestBody: "{}",
          result: answered(status),
          probe: delivery.probe,
        });
        recording.catch(() => {});
        expect(await waitingOnALock(db), "the record waits for the subscription").toBe(true);
        // ...and then the verb disables it and fails what waits.
        await updateSubscription({ ctx, id: sub.id, input: { status: "disabled" } });
      });
      await expect(recording).resolves.toMatchObject({ attempt: 1 });
      const [after] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, delivery.id));
      const [subAfter] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id));
      expect(subAfter!.status).toBe("disabled");
      expect(after!.attemptCount).toBe(1);
      // The disable failed the delivery first; a failed attempt leaves it so, and one the
      // subscriber accepted says so.
      expect(after!.status).toBe(settled);
    });
  }
});
