import { afterAll, describe, expect, it, vi } from "vitest";
import { sql } from "drizzle-orm";
import { createActivity } from "@/lib/activities/create-activity";
import { getDb } from "@/lib/db/client";
import { WORK_CHANNEL } from "@/lib/events/channel";
import { setupApi } from "@/lib/testing/fixtures";
import { wakeWebhookRunner } from "@/lib/webhooks/wake";
import { inngest, OUTBOX_APPENDED } from "./client";
import { startOutboxNotifier } from "./outbox-notifier";
import { inWriteCtx } from "../lib/http/operation";

const api = setupApi();
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
});
