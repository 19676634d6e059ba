// The service SIGKILLed again and again during a burst of webhook-producing writes, and started
// again each time: every committed event reaches every entitled subscription at least once, and
// a duplicate carries the event id of the first delivery.
import { FaultReceiver } from "../lib/fault-receiver";
import { check, type Check, type Figure } from "../lib/report";
import {
  Client,
  createApps,
  createPeople,
  grant,
  percentile,
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

const APPS = 3;
const WRITERS = 8;
/** How long each service process writes before it is killed: a random span in this range. */
const BURST_MS: [number, number] = [1_500, 3_000];
/** Receivers take this long to answer, so a kill finds deliveries in flight. */
const ANSWER_MS = 50;
/** After the last restart, how long to wait for every delivery at most, and without progress. */
const DRAIN_DEADLINE_MS = 300_000;
const STALL_MS = 45_000;

export async function killDuringBurst(opts: FaultOptions, log: Log): Promise<{ figures: Figure[]; checks: Check[]; details: Record<string, unknown> }> {
  const kills = scaled(20, opts);
  const db = await scratchDatabase("kill");
  const names = Array.from({ length: APPS }, (_, i) => `k${i}`);
  const receiver = await FaultReceiver.start(names);
  const client = new Client("");
  const env = { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE_S: "1", DELIVERY_RUNNER: "local" };
  const uncaught: string[] = [];
  let service: Service | undefined;
  const start = async () => {
    service = await startWatchedService(opts, db.url, env, log);
    client.base = service.server.url;
    return service;
  };
  try {
    const people = await createPeople(db.url, WRITERS, ["activities.write"], "kill");
    const apps = await createApps(db.url, APPS, "kill");
    for (const a of apps) await grant(db.url, a.clientId, people.map((p) => p.id), ["activities.read"]);
    await start();
    for (const [i, a] of apps.entries()) {
      const sub = await client.subscribe(a, receiver.url(names[i]!), ["activity.created"]);
      receiver.setSecret(names[i]!, sub.secret);
      receiver.setDelay(names[i]!, ANSWER_MS);
    }
    log(`kill: ${APPS} subscriptions on ${WRITERS} athletes' writes; ${kills} kills; receivers answer in ${ANSWER_MS} ms`);

    const acked: string[] = [];
    let writeErrors = 0;
    const cycles: { readyAt: number; killAt: number; writes: number }[] = [];
    for (let k = 1; k <= kills; k++) {
      if (k > 1) await start();
      const s = service!;
      const readyAt = Date.now();
      let stop = false;
      let writes = 0;
      const writers = people.map(async (p, i) => {
        for (let n = 0; !stop; n++) {
          try {
            const a = await client.call("POST", "/v1/athletes/me/activities", {
              headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json" },
              body: JSON.stringify({ name: `kill ${k}.${i}.${n}`, sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 }),
              timeoutMs: 10_000,
            });
            if (a.status === 201) {
              acked.push((JSON.parse(a.text) as { id: string }).id);
              writes++;
            }
          } catch {
            // the kill: this write may or may not have committed
            writeErrors++;
            return;
          }
        }
      });
      await sleep(BURST_MS[0] + Math.random() * (BURST_MS[1] - BURST_MS[0]));
      const killAt = Date.now();
      s.kill();
      stop = true;
      await Promise.all(writers);
      await s.server.stop();
      uncaught.push(...s.uncaught);
      cycles.push({ readyAt, killAt, writes });
      log(`kill ${k}/${kills}: ${writes} writes acknowledged in ${round2((killAt - readyAt) / 1000)} s, then SIGKILL`);
    }

    // One more start, to deliver what the killed processes left.
    const last = await start();
    const restartedAt = Date.now();
    const rows = await withSql(db.url, (sql) => sql<{ id: string; object_id: string }[]>`select id, object_id from events where type = 'activity.created'`);
    const expected = rows.map((r) => r.id);
    const withEvent = new Set(rows.map((r) => r.object_id));
    const want = new Set(expected.flatMap((e) => names.map((n) => `${n} ${e}`)));
    // Until everything owed has arrived, or nothing more has for STALL_MS (a delivery that
    // cannot come), or the deadline.
    const deadline = Date.now() + DRAIN_DEADLINE_MS;
    let owedLeft = want.size;
    let progressAt = Date.now();
    for (;;) {
      const got = receiver.delivered();
      let left = 0;
      for (const w of want) if (!got.has(w)) left++;
      if (left < owedLeft) progressAt = Date.now();
      owedLeft = left;
      if (left === 0 || Date.now() > deadline || Date.now() - progressAt > STALL_MS) break;
      await sleep(250);
    }
    const drainedS = round2((Date.now() - restartedAt) / 1000);
    uncaught.push(...last.uncaught);

    const delivered = receiver.delivered();
    const missing = [...want].filter((w) => !delivered.has(w));
    // Duplicates: every 200 beyond the first for one subscription and event; and the event ids
    // each subscription saw for one activity (one, if duplicates carry the same id).
    const firstAt = new Map<string, number>();
    const duplicates: { key: string; firstAt: number; at: number }[] = [];
    const idsPerObject = new Map<string, Set<string>>();
    for (const a of receiver.attempts) {
      if (a.answered !== "200") continue;
      const key = `${a.sub} ${a.eventId}`;
      const ids = idsPerObject.get(`${a.sub} ${a.objectId}`) ?? new Set<string>();
      ids.add(a.eventId);
      idsPerObject.set(`${a.sub} ${a.objectId}`, ids);
      const f = firstAt.get(key);
      if (f === undefined) firstAt.set(key, a.at);
      else duplicates.push({ key, firstAt: f, at: a.at });
    }
    const objectsWithSeveralIds = [...idsPerObject.values()].filter((s) => s.size > 1).length;
    const badSignatures = receiver.attempts.filter((a) => a.answered === "400 bad signature").length;
    // Each duplicate belongs to the kill nearest its first copy: one that came after it (the
    // process died before recording the answer) or just before it (the request was in flight
    // when it died). How long after that kill, and after the next process was ready, it came again.
    const killOf = (d: { firstAt: number }) =>
      cycles.reduce((best, c, i) => (best < 0 || Math.abs(c.killAt - d.firstAt) < Math.abs(cycles[best]!.killAt - d.firstAt) ? i : best), -1);
    const perKill = cycles.map((c, i) => {
      const nextReady = cycles[i + 1]?.readyAt ?? restartedAt;
      const dups = duplicates.filter((d) => killOf(d) === i);
      const afterKill = dups.map((d) => (d.at - c.killAt) / 1000);
      const afterReady = dups.map((d) => (d.at - nextReady) / 1000);
      return {
        kill: i + 1,
        duplicates: dups.length,
        afterKillS: dups.length ? `${round2(Math.min(...afterKill))}–${round2(Math.max(...afterKill))}` : "",
        afterRestartS: dups.length ? `${round2(Math.min(...afterReady))}–${round2(Math.max(...afterReady))}` : "",
        restartS: round2((nextReady - c.killAt) / 1000),
      };
    });
    const delays = duplicates.map((d) => (d.at - cycles[killOf(d)]!.killAt) / 1000);
    const restartSpans = perKill.map((p) => p.restartS);
    log(`kill: ${expected.length} events committed, ${want.size} deliveries owed, ${missing.length} missing, ${duplicates.length} duplicates (drained in ${drainedS} s after the last start)`);
    for (const p of perKill.filter((x) => x.duplicates)) {
      log(`  kill ${p.kill}: ${p.duplicates} duplicates, ${p.afterKillS} s after the kill (${p.afterRestartS} s after the next process was ready, which took ${p.restartS} s)`);
    }

    return {
      figures: [
        { name: "kill: SIGKILLs during the burst", value: kills },
        { name: "kill: writes acknowledged / failed by the kill", value: `${acked.length} / ${writeErrors}` },
        { name: "kill: events committed", value: expected.length },
        { name: "kill: deliveries owed (events × subscriptions)", value: want.size },
        { name: "kill: delivered (distinct)", value: [...want].filter((w) => delivered.has(w)).length },
        { name: "kill: duplicates", value: duplicates.length },
        {
          name: "kill: duplicates arrived after their kill, s (median / max)",
          value: duplicates.length ? `${round2(percentile(delays, 0.5))} / ${round2(Math.max(...delays))}` : "none",
        },
        { name: "kill: a restart took, s (median / max)", value: `${round2(percentile(restartSpans, 0.5))} / ${round2(Math.max(...restartSpans))}` },
        { name: "kill: all delivered, s after the last start", value: drainedS },
      ],
      checks: [
        check("kill: committed events not delivered to an entitled subscription", missing.length, "≤", 0, ""),
        check("kill: activities delivered under more than one event id", objectsWithSeveralIds, "≤", 0, ""),
        check("kill: deliveries failing signature verification", badSignatures, "≤", 0, ""),
        check("kill: acknowledged writes without their event", acked.filter((id) => !withEvent.has(id)).length, "≤", 0, ""),
        check("kill: lines thrown uncaught in the service", uncaught.length, "≤", 0, ""),
      ],
      details: { cycles, perKill, missing: missing.slice(0, 20), uncaught },
    };
  } finally {
    await client.close();
    await service?.server.stop();
    await receiver.close();
    await db.drop().catch(() => {});
  }
}
