import { afterAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createActivity } from "../activities/create-activity";
import { rowsOf } from "../db/client";
import { resetEnvForTests } from "../env";
import { inWriteCtx } from "../http/operation";
import { setupApi } from "../testing/fixtures";
import { startReceiver, type Receiver } from "../testing/webhook-receiver";
import { webhookRows } from "../testing/webhook-rows";
import { startLocalRunner } from "./local-runner";
import { deliveryTidier } from "./tidy";

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();

const api = setupApi();
const rows = webhookRows(api.db);
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

/** How many times each delivery table was vacuumed by hand (PostgreSQL's own statistics). */
async function vacuums(): Promise<Record<string, number>> {
  const db = await api.db();
  const r = rowsOf<{ relname: string; n: number | string }>(
    await db.execute(sql`select relname, vacuum_count as n from pg_stat_user_tables where relname in ('webhook_deliveries', 'events')`),
  );
  return Object.fromEntries(r.map((x) => [x.relname, Number(x.n)]));
}

describe("the delivery tables are vacuumed by the runner that updates them", () => {
  it("vacuums webhook_deliveries and events once every N recorded attempts, never sooner than the interval", async () => {
    const db = await api.db();
    const tidy = deliveryTidier({ everyAttempts: 3, minIntervalMs: 60_000 });
    const before = await vacuums();
    expect(tidy.recorded(db)).toBeUndefined();
    expect(tidy.recorded(db)).toBeUndefined();
    const started = tidy.recorded(db);
    expect(started).toBeInstanceOf(Promise);
    await started;
    expect(await vacuums()).toEqual({ webhook_deliveries: before.webhook_deliveries! + 1, events: before.events! + 1 });
    // Three more attempts within the interval: no second vacuum.
    for (let i = 0; i < 3; i++) expect(tidy.recorded(db)).toBeUndefined();
    await tidy.settled();
    expect(await vacuums()).toEqual({ webhook_deliveries: before.webhook_deliveries! + 1, events: before.events! + 1 });
  });

  it("the local runner asks for it as it records deliveries", async () => {
    const db = await api.db();
    const athlete = await api.person();
    const clientId = await rows.app();
    await rows.grant(clientId, athlete.id, ["activities.read"]);
    const rx = await startReceiver();
    receivers.push(rx);
    await rows.subscribe(clientId, rx.url);
    const runner = startLocalRunner({ db, allowPrivate: true, pollMs: 60_000, timeoutMs: 2000, tidyEveryAttempts: 4 });
    try {
      const before = await vacuums();
      for (let i = 0; i < 4; i++) {
        await inWriteCtx({ db, actor: { kind: "session", userId: athlete.id } }, (ctx) =>
          createActivity({ ctx, athleteId: athlete.id, input: { name: `Run ${i}`, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 1800 } }),
        );
      }
      await rx.waitFor((all) => all.length >= 4);
      await runner.idle();
      await runner.stop(); // waits for a vacuum under way
      expect((await vacuums()).webhook_deliveries).toBe(before.webhook_deliveries! + 1);
    } finally {
      await runner.stop();
    }
  });
});
