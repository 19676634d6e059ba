import { describe, expect, it, vi } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { eq, sql } from "drizzle-orm";
import { webhookDeliveries } from "@/lib/db/schema";
import { setupApi } from "@/lib/testing/fixtures";
import { webhookRows } from "@/lib/testing/webhook-rows";
import { DELIVERIES_WAITING, DELIVERY_DUE } from "../client";
import { handOutWaitingFn, WAITING_PAGE, WAITING_PAGES_PER_RUN } from "./hand-out-waiting";
import { fanOutEventsFn } from "./fan-out-events";

const api = setupApi();
const rows = webhookRows(api.db);

const sends = [
  "hand-out-rest",
  "dispatch-due",
  ...Array.from({ length: WAITING_PAGES_PER_RUN }, (_, i) => `dispatch-waiting-${i}`),
  ...Array.from({ length: 20 }, (_, i) => `dispatch-${i}`),
].map((id) => ({ id, handler: () => ({ ids: [] }) }));

/** A subscription (nothing listens: nothing here sends) with `n` pending deliveries, due `dueAgoS` ago and last changed then. */
async function backlog(n: number, dueAgoS = 0) {
  const athlete = await api.person();
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  const sub = await rows.subscribe(clientId, "http://127.0.0.1:9/hook");
  const db = await api.db();
  await db.execute(sql`
    insert into ${webhookDeliveries} (id, subscription_id, event_id, event_seq, next_attempt_at, created_at, updated_at)
    select ${sub.id} || '-' || g, ${sub.id}, 'evt_' || ${sub.id} || '-' || g, g,
      now() - make_interval(secs => ${dueAgoS}), now() - make_interval(secs => ${dueAgoS}), now() - make_interval(secs => ${dueAgoS})
    from generate_series(1, ${n}) g`);
  return sub;
}

type Sent = { id: string; name: string; data: { delivery_id: string; subscription_id: string } };
function dispatched(ctx: { step: { sendEvent: unknown } }, prefix: string): Sent[] {
  return vi
    .mocked(ctx.step.sendEvent as (id: string, e: unknown) => unknown)
    .mock.calls.filter(([id]) => id.startsWith(prefix))
    .flatMap(([, e]) => e as Sent[]);
}

describe("hand-out-waiting (Inngest): after a failing subscription recovers", () => {
  it("hands out every delivery that waited, a page at a time, oldest events first, and the rest from a run of its own after its pages", async () => {
    const n = WAITING_PAGE * WAITING_PAGES_PER_RUN + 1;
    const sub = await backlog(n);
    const run = (data: object) => new InngestTestEngine({ function: handOutWaitingFn, events: [{ name: DELIVERIES_WAITING, data }], steps: [...sends] }).execute();
    const first = await run({ subscription_id: sub.id });
    expect(first.result).toEqual({ handedOut: n - 1, done: false });
    const firstSent = dispatched(first.ctx, "dispatch-waiting-");
    expect(firstSent.map((e) => e.data.delivery_id)).toEqual(Array.from({ length: n - 1 }, (_, i) => `${sub.id}-${i + 1}`));
    expect(firstSent[0]).toMatchObject({ id: expect.stringMatching(`^deliver-${sub.id}-1-\\d+$`), name: DELIVERY_DUE, data: { subscription_id: sub.id } });
    const [[, rest]] = vi.mocked(first.ctx.step.sendEvent).mock.calls.filter(([id]) => id === "hand-out-rest") as unknown as [[string, { data: object }]];
    expect(rest.data).toEqual({ subscription_id: sub.id, after_seq: n - 1 });
    const second = await run(rest.data);
    expect(second.result).toEqual({ handedOut: 1, done: true });
    expect(dispatched(second.ctx, "dispatch-waiting-").map((e) => e.data.delivery_id)).toEqual([`${sub.id}-${n}`]);
  });

  it("the minute's sweep passes over what was just handed out, and takes subscriptions in turns: one backlog does not fill it", async () => {
    // Out of the way: earlier tests' overdue deliveries.
    await (await api.db()).update(webhookDeliveries).set({ status: "succeeded" }).where(eq(webhookDeliveries.status, "pending"));
    // A backlog larger than the sweep, overdue by ten minutes; another subscription's one delivery, overdue by five.
    const big = await backlog(600, 600);
    const small = await backlog(1, 300);
    const sweep = async (ts: number) => {
      const { ctx } = await new InngestTestEngine({
        function: fanOutEventsFn,
        events: [{ name: "inngest/scheduled.timer", data: { cron: "* * * * *" }, ts }],
        steps: [...sends],
      }).execute();
      return dispatched(ctx, "dispatch-due");
    };
    const first = await sweep(Date.now());
    expect(first).toHaveLength(500);
    expect(first.map((e) => e.data.delivery_id)).toContain(`${small.id}-1`);
    expect(first.filter((e) => e.data.subscription_id === big.id)).toHaveLength(499);
    // The next minute: what is still queued from the last sweep is not handed out again, only the rest.
    const next = await sweep(Date.now() + 60_000);
    expect(next.map((e) => e.data.delivery_id).sort()).toEqual(Array.from({ length: 101 }, (_, i) => `${big.id}-${i + 500}`).sort());
    // Two minutes on, what still waits unclaimed is handed out again (its hand-out may have been lost).
    const db = await api.db();
    await db.update(webhookDeliveries).set({ updatedAt: sql`now() - interval '3 minutes'` }).where(eq(webhookDeliveries.subscriptionId, small.id));
    expect((await sweep(Date.now() + 120_000)).map((e) => e.data.delivery_id)).toEqual([`${small.id}-1`]);
  });
});
