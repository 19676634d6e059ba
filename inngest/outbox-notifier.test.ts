import { afterAll, describe, expect, it, vi } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { desc, eq, sql } from "drizzle-orm";
import { createActivity } from "@/lib/activities/create-activity";
import { getDb } from "@/lib/db/client";
import { events, webhookDeliveries } from "@/lib/db/schema";
import { WORK_CHANNEL } from "@/lib/events/channel";
import { setupApi } from "@/lib/testing/fixtures";
import { webhookRows } from "@/lib/testing/webhook-rows";
import { updateSubscription } from "@/lib/webhooks/subscriptions/update-subscription";
import { wakeWebhookRunner } from "@/lib/webhooks/wake";
import { DELIVERIES_WAITING, DELIVERY_DUE, inngest, OUTBOX_APPENDED } from "./client";
import { handOutWaitingFn } from "./functions/hand-out-waiting";
import { startOutboxNotifier } from "./outbox-notifier";
import { inWriteCtx } from "../lib/http/operation";

const api = setupApi();
const rows = webhookRows(api.db);

/** Until the notifier's LISTEN is in place: a NOTIFY on the channel reaches Inngest. */
async function listening() {
  const db = await api.db();
  await vi.waitFor(
    async () => {
      await db.execute(sql`select pg_notify(${WORK_CHANNEL}, 'queue')`);
      expect(send).toHaveBeenCalledWith({ name: OUTBOX_APPENDED, data: { queue: true } });
    },
    { timeout: 5000, interval: 50 },
  );
  send.mockClear();
}
const send = vi.spyOn(inngest, "send").mockResolvedValue({ ids: [] } as never);
afterAll(() => send.mockRestore());

describe("outbox notifier (DELIVERY_RUNNER=inngest)", () => {
  it("tells Inngest when a write commits, and when deliveries are queued outside fan-out", async () => {
    const notifier = startOutboxNotifier(getDb);
    try {
      // LISTEN is in place once a NOTIFY on the channel reaches Inngest: notify until one does.
      const db = await api.db();
      await vi.waitFor(
        async () => {
          await db.execute(sql`select pg_notify(${WORK_CHANNEL}, 'queue')`);
          expect(send).toHaveBeenCalledWith({ name: OUTBOX_APPENDED, data: { queue: true } });
        },
        { timeout: 5000, interval: 50 },
      );
      const athlete = await api.person();
      send.mockClear();
      await inWriteCtx({ db: await api.db(), actor: { kind: "session", userId: athlete.id } }, (ctx) =>
        createActivity({
          ctx,
          athleteId: athlete.id,
          input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 },
        }),
      );
      await vi.waitFor(() => expect(send).toHaveBeenCalledWith({ name: OUTBOX_APPENDED, data: {} }), { timeout: 2000 });
      send.mockClear();
      wakeWebhookRunner();
      await vi.waitFor(() => expect(send).toHaveBeenCalledWith({ name: OUTBOX_APPENDED, data: { queue: true } }), { timeout: 2000 });
    } finally {
      await notifier.stop();
    }
  });

  it("re-enabling with redeliver_failed hands out every delivery of the streak, not one listing's 500", async () => {
    const notifier = startOutboxNotifier(getDb);
    try {
      await listening();
      const athlete = await api.person();
      const clientId = await rows.app();
      await rows.grant(clientId, athlete.id, ["activities.read"]);
      const url = "http://127.0.0.1:9/hook";
      const sub = await rows.subscribe(clientId, url, undefined, {
        status: "disabled",
        consecutiveFailures: 20,
        failingSince: new Date(Date.now() - 3_600_000),
        disabledAt: new Date(),
      });
      await inWriteCtx({ db: await api.db(), actor: { kind: "session", userId: athlete.id } }, (ctx) =>
        createActivity({ ctx, athleteId: athlete.id, input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }),
      );
      const db = await api.db();
      const [event] = await db.select().from(events).where(eq(events.athleteId, athlete.id)).orderBy(desc(events.seq)).limit(1);
      // A streak's worth, failed when the subscription was disabled.
      const n = 1200;
      await db.execute(sql`
        insert into ${webhookDeliveries} (id, subscription_id, event_id, event_seq, status, failure_reason, attempt_count, next_attempt_at, created_at, updated_at)
        select ${sub.id} || '-' || g, ${sub.id}, ${event!.id}, g, 'failed', 'subscription_disabled', 1, now(), now() - interval '30 minutes', now()
        from generate_series(1, ${n}) g`);
      send.mockClear();
      const updated = await inWriteCtx({ db, actor: { kind: "app", clientId } }, (ctx) =>
        updateSubscription({ ctx, id: sub.id, input: { status: "active", redeliver_failed: true }, verifiedUrl: url }),
      );
      expect(updated).toMatchObject({ status: "active", redelivered: n });
      type Waiting = { id: string; name: string; data: { subscription_id: string; as_of: number } };
      const waiting = await vi.waitFor(
        () => {
          const found = send.mock.calls.map(([e]) => e as unknown as Waiting).find((e) => e.name === DELIVERIES_WAITING);
          expect(found).toBeDefined();
          return found!;
        },
        { timeout: 2000 },
      );
      expect(waiting).toMatchObject({ id: expect.stringMatching(`^waiting-${sub.id}-v\\d+$`), data: { subscription_id: sub.id } });
      const sends = Array.from({ length: 20 }, (_, i) => ({ id: `dispatch-waiting-${i}`, handler: () => ({ ids: [] }) }));
      const { result, ctx } = await new InngestTestEngine({ function: handOutWaitingFn, events: [{ name: DELIVERIES_WAITING, data: waiting.data }], steps: sends }).execute();
      expect(result).toEqual({ handedOut: n, done: true });
      const sent = vi
        .mocked(ctx.step.sendEvent)
        .mock.calls.flatMap(([, e]) => e as { name: string; data: { delivery_id: string } }[])
        .filter((e) => e.name === DELIVERY_DUE);
      expect(new Set(sent.map((e) => e.data.delivery_id)).size).toBe(n);
    } finally {
      await notifier.stop();
    }
  });
});
