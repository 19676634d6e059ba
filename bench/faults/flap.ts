// Receivers that flap (answer 500, hold the request past the service's timeout, refuse the
// connection, in turns) while 10,000 events are written, on a fast retry schedule: once they
// recover, the delivered set equals the committed set.
//
// A subscription is disabled at 20 consecutive failures. The flapping is shaped to stay under
// that (a failing subscription is probed one delivery at a time, so a 3 s outage on this
// schedule costs a handful of failures); should one be disabled anyway, it is re-enabled with
// `redeliver_failed`, as an app would, and the report says so.
import { FaultReceiver, type ReceiverMode } from "../lib/fault-receiver";
import { check, type Check, type Figure } from "../lib/report";
import {
  Client,
  createApps,
  createPeople,
  grant,
  pool,
  round2,
  scaled,
  scratchDatabase,
  sleep,
  startWatchedService,
  withSql,
  type FaultOptions,
  type Log,
  type Service,
} from "./common";

const SUBSCRIPTIONS = 4;
const ATHLETES = 16;
const WRITE_CONCURRENCY = 8;
/** The retry schedule for this part: seconds after failed attempt 1, 2, 3, then every 2 s (±20 %). */
const RETRY_SCHEDULE = "0.5,1,1,2";
/** One turn of a receiver: healthy spells between a 500 spell, a hang past the 10 s timeout, and refusals. */
const TURN: [ReceiverMode, number][] = [
  ["ok", 4_000],
  ["error", 3_000],
  ["ok", 4_000],
  ["hang", 12_000],
  ["ok", 4_000],
  ["refuse", 3_000],
];
const DRAIN_DEADLINE_MS = 180_000;

export async function flappingReceivers(opts: FaultOptions, log: Log): Promise<{ figures: Figure[]; checks: Check[]; details: Record<string, unknown> }> {
  const events = scaled(10_000, opts, 100);
  const db = await scratchDatabase("flap");
  const names = Array.from({ length: SUBSCRIPTIONS }, (_, i) => `f${i}`);
  const receiver = await FaultReceiver.start(names);
  const client = new Client("");
  let service: Service | undefined;
  try {
    const people = await createPeople(db.url, ATHLETES, ["activities.write"], "flap");
    const apps = await createApps(db.url, SUBSCRIPTIONS, "flap");
    // Athlete k authorized apps k and k + 1 (mod 4): every event is owed to two subscriptions.
    for (const [i, a] of apps.entries()) {
      const athletes = people.filter((_, k) => k % SUBSCRIPTIONS === i || (k + 1) % SUBSCRIPTIONS === i);
      await grant(db.url, a.clientId, athletes.map((p) => p.id), ["activities.read"]);
    }
    service = await startWatchedService(opts, db.url, { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE_S: RETRY_SCHEDULE, DELIVERY_RUNNER: "local" }, log);
    client.base = service.server.url;
    const subs: { id: string; token: string }[] = [];
    for (const [i, a] of apps.entries()) {
      const sub = await client.subscribe(a, receiver.url(names[i]!), ["activity.created"]);
      receiver.setSecret(names[i]!, sub.secret);
      subs.push(sub);
    }
    log(`flap: ${events} events, each owed to 2 of ${SUBSCRIPTIONS} subscriptions; retry schedule ${RETRY_SCHEDULE} s`);

    // The receivers flap in turns, each a quarter of a turn behind the previous one, for as long
    // as the writes go on and at least one whole turn.
    let flapping = true;
    const turnMs = TURN.reduce((t, [, ms]) => t + ms, 0);
    const spells: Record<ReceiverMode, number> = { ok: 0, error: 0, hang: 0, refuse: 0 };
    const flappers = names.map(async (name, i) => {
      await sleep((i * turnMs) / SUBSCRIPTIONS / 4);
      while (flapping) {
        for (const [mode, ms] of TURN) {
          if (!flapping) break;
          spells[mode]++;
          await receiver.setMode(name, mode);
          await sleep(ms);
        }
      }
      await receiver.setMode(name, "ok");
    });
    // The highest consecutive_failures any subscription reached, read once a second.
    let maxFailures = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [row] = await withSql(db.url, (sql) => sql<{ m: number }[]>`select coalesce(max(consecutive_failures), 0)::int as m from webhook_subscriptions`).catch(() => [{ m: 0 }]);
        maxFailures = Math.max(maxFailures, row?.m ?? 0);
        await sleep(1_000);
      }
    })();

    const t0 = Date.now();
    let acked = 0;
    let writeFailures = 0;
    await pool(events, WRITE_CONCURRENCY, async (n) => {
      const p = people[n % ATHLETES]!;
      const a = await client.call("POST", "/v1/athletes/me/activities", {
        headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `flap ${n}`, sport_type: "ride", start_local: "2026-04-01T18:00:00", elapsed_time_s: 3600 }),
      });
      if (a.status === 201) acked++;
      else writeFailures++;
    });
    const writesS = round2((Date.now() - t0) / 1000);
    log(`flap: ${acked} writes acknowledged in ${writesS} s (${writeFailures} not); receivers flap one more turn`);
    await sleep(Math.max(0, t0 + turnMs - Date.now()));
    flapping = false;
    await Promise.all(flappers);
    const recoveredAt = Date.now();

    const rows = await withSql(db.url, (sql) => sql<{ id: string; athlete_id: string }[]>`select id, athlete_id from events where type = 'activity.created'`);
    const subOfApp = new Map(apps.map((a, i) => [a.clientId, names[i]!]));
    const entitled = await withSql(db.url, (sql) => sql<{ client_id: string; user_id: string }[]>`select client_id, user_id from oauth_grants where revoked_at is null`);
    const subsOf = new Map<string, string[]>();
    for (const g of entitled) subsOf.set(g.user_id, [...(subsOf.get(g.user_id) ?? []), subOfApp.get(g.client_id)!]);
    const want = new Set(rows.flatMap((e) => (subsOf.get(e.athlete_id) ?? []).map((s) => `${s} ${e.id}`)));
    const missingNow = () => {
      const got = receiver.delivered();
      return [...want].filter((w) => !got.has(w));
    };

    // Disabled subscriptions are re-enabled as an app would: PATCH with redeliver_failed.
    const reenabled: string[] = [];
    const deadline = recoveredAt + DRAIN_DEADLINE_MS;
    while (missingNow().length && Date.now() < deadline) {
      const disabled = await withSql(db.url, (sql) => sql<{ id: string }[]>`select id from webhook_subscriptions where status = 'disabled'`);
      for (const d of disabled) {
        const sub = subs.find((s) => s.id === d.id)!;
        const app = apps[subs.indexOf(sub)]!;
        await client.json("PATCH", `/v1/app/webhooks/${sub.id}`, 200, {
          headers: { authorization: `Bearer ${await client.appToken(app)}` },
          body: { status: "active", redeliver_failed: true },
        });
        reenabled.push(sub.id);
        log(`flap: subscription ${sub.id} was disabled; re-enabled with redeliver_failed`);
      }
      await sleep(500);
    }
    const drainedS = round2((Date.now() - recoveredAt) / 1000);
    watching = false;
    await watcher;
    const missing = missingNow();
    const state = await withSql(db.url, async (sql) => {
      const [d] = await sql<{ failed: number; pending: number }[]>`
        select count(*) filter (where status = 'failed')::int as failed, count(*) filter (where status = 'pending')::int as pending from webhook_deliveries`;
      return d!;
    });
    const byAnswer: Record<string, number> = {};
    for (const a of receiver.attempts) byAnswer[a.answered] = (byAnswer[a.answered] ?? 0) + 1;
    const delivered = receiver.delivered();
    const extra = [...delivered].filter((d) => !want.has(d)).length;
    const oks = receiver.attempts.filter((a) => a.answered === "200").length;
    log(
      `flap: ${rows.length} events, ${want.size} deliveries owed, ${want.size - missing.length} delivered ${drainedS} s after the receivers recovered; ` +
        `attempts answered ${JSON.stringify(byAnswer)}; highest consecutive_failures ${maxFailures}`,
    );

    return {
      figures: [
        { name: "flap: events committed / writes acknowledged", value: `${rows.length} / ${acked}` },
        { name: "flap: deliveries owed (each event to 2 subscriptions)", value: want.size },
        { name: "flap: delivered (distinct) once the receivers recovered", value: want.size - missing.length },
        { name: "flap: attempts refused by the receivers (500 / held past the timeout)", value: `${byAnswer["500"] ?? 0} / ${byAnswer.held ?? 0}` },
        { name: "flap: receiver spells (500 / hang / refuse)", value: `${spells.error} / ${spells.hang} / ${spells.refuse}` },
        { name: "flap: highest consecutive_failures", value: maxFailures },
        { name: "flap: subscriptions disabled and re-enabled with redeliver_failed", value: reenabled.length },
        { name: "flap: duplicates (200s beyond the first)", value: oks - delivered.size },
        { name: "flap: writes took, s / all delivered, s after recovery", value: `${writesS} / ${drainedS}` },
      ],
      checks: [
        check("flap: owed deliveries missing after recovery", missing.length, "≤", 0, ""),
        check("flap: deliveries of events not owed", extra, "≤", 0, ""),
        check("flap: deliveries failed for good", state.failed, "≤", 0, ""),
        check("flap: lines thrown uncaught in the service", service.uncaught.length, "≤", 0, ""),
      ],
      details: { byAnswer, spells, reenabled, state, missing: missing.slice(0, 20), uncaught: service.uncaught, maxFailures },
    };
  } finally {
    await client.close();
    await service?.server.stop();
    await receiver.close();
    await db.drop().catch(() => {});
  }
}
