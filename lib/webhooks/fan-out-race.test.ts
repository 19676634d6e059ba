import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { createActivity } from "../activities/create-activity";
import type { Db } from "../db/client";
import { webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { inWriteCtx } from "../http/operation";
import { disconnectApp } from "../oauth-grants/disconnect-app";
import { setupApi } from "../testing/fixtures";
import { webhookRows } from "../testing/webhook-rows";
import { fanOutEvents } from "./fan-out";
import { untilWaitingOnLock } from "../testing/lock-wait";

const api = setupApi();
const rows = webhookRows(api.db);

/** An athlete who granted an app `activities.read`, the app's subscription, and one activity.created waiting in the outbox. */
async function world() {
  const athlete = await api.person();
  const clientId = await rows.app();
  const grantId = await rows.grant(clientId, athlete.id, ["activities.read"]);
  const sub = await rows.subscribe(clientId, "https://hooks.example.com/in", ["activity.created"]);
  const db = await api.db();
  // Earlier tests' events out of the way, so the fan-out under test takes this one.
  while ((await fanOutEvents(db)).events > 0);
  await inWriteCtx({ db, actor: { kind: "session", userId: athlete.id } }, (ctx) =>
    createActivity({ ctx, athleteId: athlete.id, input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }),
  );
  return { athlete, clientId, grantId, sub };
}

/**
 * Runs `change` in a transaction and fans out while it is open, committing it once fan-out
 * waits on its locks (or has finished without waiting, as it did before it took any).
 */
async function fanOutDuring(db: Db, change: (tx: Db) => Promise<void>): Promise<void> {
  let fanning: Promise<unknown> | undefined;
  let settled = false;
  await db.transaction(async (tx) => {
    await change(tx as unknown as Db);
    fanning = fanOutEvents(db).finally(() => (settled = true));
    await untilWaitingOnLock(db, () => settled, "fan-out");
  });
  await fanning;
}

async function pending(subscriptionId: string): Promise<number> {
  const db = await api.db();
  const found = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.subscriptionId, subscriptionId), eq(webhookDeliveries.status, "pending")));
  return found.length;
}

// Holding a disable or a disconnect open while fan-out runs needs two connections at once:
// PostgreSQL's pool has them, the embedded database has one connection and runs them in turn.
describe.runIf(process.env.TEST_DATABASE_URL)("fan-out racing a change that ends a subscription's or an app's events", () => {
  it("a subscription disabled while its events are fanned out is left with no delivery waiting (CONTRACT §7: a disabled subscription's pending deliveries fail)", async () => {
    const { sub } = await world();
    const db = await api.db();
    // As the 20th failure disables it (record-attempt.ts): lock, disable, fail what waits.
    await fanOutDuring(db, async (tx) => {
      await tx.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id)).for("update");
      await tx.update(webhookSubscriptions).set({ status: "disabled", disabledAt: new Date() }).where(eq(webhookSubscriptions.id, sub.id));
      await tx
        .update(webhookDeliveries)
        .set({ status: "failed" })
        .where(and(eq(webhookDeliveries.subscriptionId, sub.id), eq(webhookDeliveries.status, "pending")));
    });
    expect(await pending(sub.id)).toBe(0);
  });

  it("an athlete who disconnects the app while their events are fanned out leaves it nothing to be sent (SPEC §6.2: events stop with the access)", async () => {
    const { athlete, grantId, sub } = await world();
    const db = await api.db();
    await fanOutDuring(db, async (tx) => {
      await disconnectApp({ ctx: { db: tx, actor: { kind: "session", userId: athlete.id } } as Parameters<typeof disconnectApp>[0]["ctx"], grantId });
    });
    // Only athlete.deauthorized, once fanned out, may still go (the subscription does not cover it here).
    while ((await fanOutEvents(db)).events > 0);
    expect(await pending(sub.id)).toBe(0);
  });
});
