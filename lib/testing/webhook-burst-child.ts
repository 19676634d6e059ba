// A service process for the kill-and-restart tests (lib/webhooks/kill-restart.test.ts): it opens
// the database named by the environment, runs the local webhook runner, and in `burst` mode
// writes activities as fast as it can, printing each id once its transaction has committed; in
// `hold` mode it writes CHILD_WRITES of them and waits, its attempts in flight. The parent kills
// it with SIGKILL; a `drain` process then finishes the work.
import { sql } from "drizzle-orm";
import { createActivity } from "../activities/create-activity";
import { openDatabase, rowsOf } from "../db/client";
import { signUp } from "../people/people";
import { startLocalRunner } from "../webhooks/local-runner";
import { webhookRows } from "./webhook-rows";
import { inWriteCtx } from "../http/operation";

const mode = process.env.CHILD_MODE ?? "burst";
const handle = await openDatabase({ url: process.env.CHILD_DATABASE_URL || undefined, dataDir: process.env.CHILD_DATA_DIR });
const db = handle.db;
const out = (line: string) => process.stdout.write(line + "\n");

// The claim lease is the runner's default (CLAIM_LEASE_S), as in the service.
const runner = startLocalRunner({ db, allowPrivate: true, schedule: [0.05], pollMs: 100, timeoutMs: Number(process.env.CHILD_TIMEOUT_MS ?? 800) });

if (mode === "burst" || mode === "hold") {
  const athlete = await signUp(db, { email: `burst-${Date.now()}@example.test`, name: "Burst", password: "correct horse battery" }, { hasSubscription: true });
  const rows = webhookRows(async () => db);
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  await rows.subscribe(clientId, process.env.CHILD_RECEIVER_URL!, ["activity.created"], {});
  out("ready");
  const ctx = { db, actor: { kind: "session" as const, userId: athlete.id } };
  const writes = mode === "hold" ? Number(process.env.CHILD_WRITES ?? 3) : Infinity;
  for (let i = 0; i < writes; i++) {
    const a = await inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input: { name: `Run ${i}`, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
    out(`committed ${a.id}`);
    // Writes arrive from sockets in a real server; yield as one would, or PGlite's
    // promise-only round trips would starve every timer and socket of the process.
    await new Promise((r) => setImmediate(r));
  }
  out("written");
  // Until killed: the runner keeps its attempts in flight and their claims renewed.
  setInterval(() => {}, 60_000);
} else {
  for (;;) {
    const [left] = rowsOf<{ n: number }>(
      await db.execute(sql`
        select ((select count(*) from events where fanned_out_at is null)
          + (select count(*) from webhook_deliveries where status = 'pending'))::int as n`),
    );
    if (left!.n === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await runner.stop();
  await handle.close();
  out("drained");
  process.exit(0);
}
