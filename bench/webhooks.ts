// webhooks: the local delivery runner over PostgreSQL, against a loopback receiver that
// verifies every signature and answers 200 at once.
//
// Targets (the issue), in every round: ≥ 1,000 deliveries/s sustained, beside a bare loop that
// signs and POSTs the same payloads to the same receiver with the same concurrency (the limit,
// ratio printed); p99 from the write that emits an event to its arrival at the receiver < 250 ms
// at 100 events/s; with one subscription down (answering 500), the others' p99 within 1.5× of the
// healthy run (best rounds of each side).
//
// The world: 8 apps, one subscription each (made through POST /v1/app/webhooks, handshake
// included). "Fan-out" athletes authorized all 8 apps, so each of their writes is 8 deliveries:
// they make the throughput burst. "Single" athletes authorized one app each, so each of their
// writes is one delivery: they make the steady 100 events/s, spread over the 8 subscriptions.
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { Agent, request } from "undici";
import { sha256Hex } from "../lib/crypto/random";
import { LOCAL_RUNNER_CONCURRENCY } from "../lib/webhooks/runner-defaults";
import { SIGNATURE_HEADER, signatureHeader } from "../lib/webhooks/signature";
import { CpuMeter, cpuText, measured, type CpuUse } from "./lib/cpu";
import { connect, databaseUrl } from "./lib/database";
import type { Arrival, FromReceiver, ToReceiver } from "./lib/hook-receiver";
import { LoadError } from "./lib/load";
import { check, type ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";
import { startService } from "./lib/servers";
import { athleteId, createBenchToken, prepareWorld } from "./lib/world";

const DB = `${process.env.BENCH_DB ?? "aas_bench"}_webhooks`;
const WORLD = { athletes: 64, activitiesEach: 1, bigAthleteActivities: 1, version: 1 };
const APPS = 8;
const FAN_OUT_ATHLETES = 16; // athletes 1–16: authorized every app
const SINGLE_ATHLETES = 32; // athletes 17–48: athlete k authorized app k mod APPS
const STEADY_EVENTS_PER_S = 100;
const WRITE_CONCURRENCY = 16;
const INTERFERENCE_CORES = 0.2;

const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;
const wallNow = () => performance.timeOrigin + performance.now();

type Percentiles = { p50: number; p90: number; p99: number; max: number; n: number };
function percentiles(xs: number[]): Percentiles {
  if (!xs.length) return { p50: NaN, p90: NaN, p99: NaN, max: NaN, n: 0 };
  const s = Float64Array.from(xs).sort();
  const at = (q: number) => round1(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: round1(s[s.length - 1]!), n: s.length };
}

/** The receiver process: configure it, drain what it got. */
class Receiver {
  private waiting: ((m: FromReceiver) => void)[] = [];
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on("message", (m: FromReceiver) => this.waiting.shift()?.(m));
  }

  static async start(): Promise<Receiver> {
    const child = fork(path.join(import.meta.dirname, "lib", "hook-receiver.ts"), [], {
      execArgv: ["--import", "tsx"],
      // Its own process group, so its CPU is counted apart from the bench's.
      detached: true,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const port = await new Promise<number>((resolve, reject) => {
      child.once("message", (m: FromReceiver) => (m.type === "listening" ? resolve(m.port) : reject(new Error("receiver: unexpected message"))));
      child.once("exit", (code) => reject(new Error(`receiver exited (${code})`)));
    });
    return new Receiver(child, `http://127.0.0.1:${port}`);
  }

  send(m: ToReceiver): void {
    this.child.send(m);
  }

  drain(): Promise<Extract<FromReceiver, { type: "drained" }>> {
    return new Promise((resolve) => {
      this.waiting.push((m) => resolve(m as Extract<FromReceiver, { type: "drained" }>));
      this.send({ type: "drain" });
    });
  }

  /** Drains until `count` arrivals have come in all (or `timeoutMs` passed), returning them all. */
  async collect(count: number, timeoutMs: number): Promise<{ arrivals: Arrival[]; badSignatures: number; unknownPaths: number }> {
    const all: Arrival[] = [];
    let bad = 0;
    let unknown = 0;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = await this.drain();
      for (const a of d.arrivals) all.push(a);
      bad += d.badSignatures;
      unknown += d.unknownPaths;
      if (all.length >= count || Date.now() > deadline) return { arrivals: all, badSignatures: bad, unknownPaths: unknown };
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}

type Writer = { athleteId: string; token: string; app: number | "all" };

async function run(opts: Parameters<Scenario["run"]>[0], log: (s: string) => void): Promise<ScenarioReport> {
  const url = databaseUrl(DB);
  const world = await prepareWorld(url, DB, WORLD, log);
  log(`database ${DB} ready (${world.reused ? "reused" : "seeded"})`);

  // A clean slate for webhook rows; the seeded athletes stay.
  const apps = Array.from({ length: APPS }, (_, i) => ({ clientId: `bench-hooks-${i}`, secret: `aas_cs_${randomBytes(24).toString("base64url")}` }));
  const sql = connect(url);
  try {
    await sql`truncate events, webhook_attempts, webhook_deliveries, webhook_subscriptions, oauth_grants, oauth_clients cascade`;
    await sql`delete from activities where name like 'Bench hook %'`;
    for (const a of apps) {
      await sql`
        insert into oauth_clients (client_id, name, kind, secret_hash, redirect_uris)
        values (${a.clientId}, ${`Bench hooks ${a.clientId}`}, 'confidential', ${sha256Hex(a.secret)}, ${["https://bench.example/cb"]})`;
    }
    const grants: { athlete: string; app: string }[] = [];
    for (let k = 1; k <= FAN_OUT_ATHLETES; k++) for (const a of apps) grants.push({ athlete: athleteId(k), app: a.clientId });
    for (let k = FAN_OUT_ATHLETES + 1; k <= FAN_OUT_ATHLETES + SINGLE_ATHLETES; k++) grants.push({ athlete: athleteId(k), app: apps[k % APPS]!.clientId });
    for (const g of grants) {
      await sql`
        insert into oauth_grants (id, client_id, user_id, scopes)
        values (${`grt_${randomBytes(11).toString("hex")}`}, ${g.app}, ${g.athlete}, ${["activities.read"]})`;
    }
  } finally {
    await sql.end();
  }
  const writers: Writer[] = [];
  for (let k = 1; k <= FAN_OUT_ATHLETES + SINGLE_ATHLETES; k++) {
    const t = await createBenchToken(url, athleteId(k), ["activities.write"]);
    writers.push({ athleteId: t.userId, token: t.token, app: k <= FAN_OUT_ATHLETES ? "all" : k % APPS });
  }
  const fanOut = writers.filter((w) => w.app === "all");
  const single = writers.filter((w) => w.app !== "all");

  const receiver = await Receiver.start();
  const service = await startService({
    databaseUrl: url,
    rebuild: opts.rebuild,
    log,
    dir: opts.serviceDir,
    env: {
      DELIVERY_RUNNER: "local",
      // The receiver is on loopback: allowed only by this setting (which also takes http://).
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: "true",
      SECRETS_KEY: randomBytes(32).toString("base64url"),
    } as Partial<NodeJS.ProcessEnv> as NodeJS.ProcessEnv,
  });
  log(`service on ${service.server.url} (${service.dir}), receiver on ${receiver.url}`);
  const meter = new CpuMeter(DB);
  meter.addGroup(service.server.pid, "service");
  meter.addGroup(receiver.child.pid!, "receiver");
  const agent = new Agent({ connections: 64 });
  const interference: { what: string; cpu?: CpuUse }[] = [];
  const note = <T extends { cpu?: CpuUse }>(what: string, r: T): T => {
    interference.push({ what, cpu: r.cpu });
    return r;
  };

  const call = async (method: "GET" | "POST", p: string, o: { headers?: Record<string, string>; body?: string; expect: number }) => {
    const res = await request(service.server.url + p, { method, headers: o.headers, body: o.body, dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode !== o.expect) throw new LoadError(`${method} ${p}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };

  try {
    // Subscriptions through the API, as an app would: a client-credentials token, then
    // POST /v1/app/webhooks, whose handshake the receiver answers.
    const secrets: Record<string, string> = {};
    const paths: string[] = [];
    for (const [i, a] of apps.entries()) {
      const tok = await call("POST", "/oauth/token", {
        headers: {
          Authorization: `Basic ${Buffer.from(`${a.clientId}:${a.secret}`).toString("base64")}`,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: "grant_type=client_credentials",
        expect: 200,
      });
      const p = `/hook/${i}`;
      const sub = await call("POST", "/v1/app/webhooks", {
        headers: { Authorization: `Bearer ${tok.access_token as string}`, "Content-Type": "application/json" },
        body: JSON.stringify({ url: receiver.url + p, events: ["activity.created"] }),
        expect: 201,
      });
      secrets[p] = sub.secret as string;
      paths.push(p);
    }
    receiver.send({ type: "config", secrets, down: [], keepBodies: true });

    let written = 0;
    const write = async (w: Writer): Promise<string> => {
      const r = await call("POST", "/v1/athletes/me/activities", {
        headers: { Authorization: `Bearer ${w.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: `Bench hook ${++written}`, sport_type: "run", start_local: "2026-01-01T07:00:00", elapsed_time_s: 1800 }),
        expect: 201,
      });
      return r.id as string;
    };
    /** `n` writes as fast as `WRITE_CONCURRENCY` writers go. */
    const burst = async (n: number, from: Writer[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: WRITE_CONCURRENCY }, async () => {
          while (next < n) await write(from[next++ % from.length]!);
        }),
      );
    };
    const verified = (got: { arrivals: Arrival[]; badSignatures: number; unknownPaths: number }, expected: number, what: string) => {
      if (got.badSignatures || got.unknownPaths) throw new LoadError(`${what}: ${got.badSignatures} deliveries failed signature verification`);
      if (got.arrivals.length < expected) throw new LoadError(`${what}: ${got.arrivals.length} of ${expected} deliveries arrived`);
      return got.arrivals;
    };

    log("warming up…");
    const w0 = wallNow();
    await burst(200, fanOut);
    verified(await receiver.collect(200 * APPS, 60_000), 200 * APPS, "warm-up");
    const warmRate = (200 * APPS * 1000) / (wallNow() - w0);

    // 1. Sustained throughput: a burst of writes by fan-out athletes, sized from the warm-up's
    // rate (it rises once the code is warm) for at least `durationS` seconds of deliveries,
    // counted at the receiver.
    const burstWrites = Math.ceil((opts.durationS * Math.max(600, 1.5 * warmRate)) / APPS);
    log(`warm-up: ${Math.round(warmRate)} deliveries/s; the burst is ${burstWrites} writes × ${APPS} subscriptions`);
    const expected = burstWrites * APPS;
    // Each of the service's workers (scripts/serve.mjs) runs its own runner.
    const workers = service.mode.workers;
    const sendConcurrency = LOCAL_RUNNER_CONCURRENCY * workers;
    const bareAgent = new Agent({ connections: sendConcurrency, keepAliveTimeout: 60_000 });
    const serviceRounds: { rate: number; writesS: number; tailRate: number; deliveries: number; durationS: number; cpu?: CpuUse }[] = [];
    const bareRounds: { rate: number; deliveries: number; durationS: number; cpu?: CpuUse }[] = [];
    let payloads: Arrival[] = [];
    for (let r = 1; r <= opts.rounds; r++) {
      const s = note(
        `service round ${r}`,
        await measured(meter, log, async () => {
          const t0 = wallNow();
          await burst(burstWrites, fanOut);
          const writesDone = wallNow();
          const got = verified(await receiver.collect(expected, 120_000), expected, "throughput");
          const times = got.map((a) => a.at).sort((a, b) => a - b);
          const first = times[0]!;
          const last = times[times.length - 1]!;
          const tail = times.filter((t) => t > writesDone);
          payloads = got;
          return {
            rate: Math.round(((got.length - 1) / (last - first)) * 1000),
            writesS: round2((writesDone - t0) / 1000),
            tailRate: tail.length > 1 ? Math.round(((tail.length - 1) / (tail[tail.length - 1]! - tail[0]!)) * 1000) : NaN,
            deliveries: got.length,
            durationS: round2((last - first) / 1000),
          };
        }),
      );
      serviceRounds.push(s);
      log(
        `round ${r}/${opts.rounds} service: ${s.deliveries} deliveries in ${s.durationS} s = ${s.rate} /s ` +
          `(writes took ${s.writesS} s; ${s.tailRate} /s after them; ${cpuText(s.cpu)})`,
      );

      // The limit: the same payloads, signed and POSTed by a bare loop with the runner's concurrency.
      const b = note(
        `bare round ${r}`,
        await measured(meter, log, async () => {
          let next = 0;
          await Promise.all(
            Array.from({ length: sendConcurrency }, async () => {
              while (next < payloads.length) {
                const a = payloads[next++]!;
                const t = Math.floor(Date.now() / 1000);
                const res = await request(receiver.url + a.path, {
                  method: "POST",
                  dispatcher: bareAgent,
                  headers: {
                    "Content-Type": "application/json",
                    [SIGNATURE_HEADER]: signatureHeader([secrets[a.path]!], t, a.body),
                    "Service-Event-Id": a.eventId,
                    "Service-Delivery-Id": `bare_${next}`,
                    "User-Agent": "AthleteActivityService-Webhooks/1",
                  },
                  body: a.body,
                });
                await res.body.text();
                if (res.statusCode !== 200) throw new LoadError(`bare loop: HTTP ${res.statusCode}`);
              }
            }),
          );
          const got = verified(await receiver.collect(payloads.length, 30_000), payloads.length, "bare loop");
          const times = got.map((a) => a.at).sort((x, y) => x - y);
          const durationS = (times[times.length - 1]! - times[0]!) / 1000;
          return { rate: Math.round((got.length - 1) / durationS), deliveries: got.length, durationS: round2(durationS) };
        }),
      );
      bareRounds.push(b);
      log(`round ${r}/${opts.rounds} bare:    ${b.deliveries} POSTs in ${b.durationS} s = ${b.rate} /s (${cpuText(b.cpu)})`);
    }
    await bareAgent.close();
    receiver.send({ type: "config", secrets, down: [], keepBodies: false });
    const bestService = serviceRounds.reduce((a, b) => (b.rate > a.rate ? b : a));
    const bestBare = bareRounds.reduce((a, b) => (b.rate > a.rate ? b : a));

    // 2 and 3. Write → arrival at a steady 100 events/s (open loop: each write is due at
    // start + i / rate whether or not earlier ones have been answered), by single athletes,
    // so each event is one delivery, spread over the 8 subscriptions.
    const steady = async (down: number | null) => {
      receiver.send({ type: "config", secrets, down: down === null ? [] : [paths[down]!], keepBodies: false });
      const total = STEADY_EVENTS_PER_S * opts.durationS;
      const due = new Map<string, { at: number; app: number }>();
      const pending: Promise<void>[] = [];
      const start = performance.now();
      await new Promise<void>((resolve) => {
        const tick = () => {
          const now = performance.now();
          while (pending.length < total && start + (pending.length * 1000) / STEADY_EVENTS_PER_S <= now) {
            const dueAt = performance.timeOrigin + start + (pending.length * 1000) / STEADY_EVENTS_PER_S;
            const w = single[pending.length % single.length]!;
            const p = write(w).then((id) => void due.set(id, { at: dueAt, app: w.app as number }));
            p.catch(() => {});
            pending.push(p);
          }
          if (pending.length < total) setTimeout(tick, 1);
          else resolve();
        };
        tick();
      });
      await Promise.all(pending);
      const healthyExpected = [...due.values()].filter((d) => d.app !== down).length;
      const got = await receiver.collect(healthyExpected, 60_000);
      const healthy = got.arrivals.filter((a) => a.path !== (down === null ? "" : paths[down]));
      verified({ ...got, arrivals: healthy }, healthyExpected, down === null ? "steady" : "steady, one subscription down");
      const latencies = healthy.map((a) => a.at - due.get(a.objectId)!.at);
      return { latency: percentiles(latencies), events: total, healthyDeliveries: healthy.length };
    };
    // All-healthy rounds first, then rounds with the first subscription answering 500 (it stays
    // down from then on, probed on the retry schedule); the best p99 of each side counts, as
    // with throughput, so a burst of other work on the machine does not decide the ratio.
    type Steady = Awaited<ReturnType<typeof steady>> & { cpu?: CpuUse };
    const healthyRounds: Steady[] = [];
    const downRounds: Steady[] = [];
    for (let r = 1; r <= opts.rounds; r++) {
      const h = note(`steady round ${r}, all healthy`, await measured(meter, log, () => steady(null)));
      healthyRounds.push(h);
      log(`round ${r}/${opts.rounds} ${STEADY_EVENTS_PER_S} events/s, all healthy: write → arrival p50 ${h.latency.p50} ms, p99 ${h.latency.p99} ms (${cpuText(h.cpu)})`);
    }
    for (let r = 1; r <= opts.rounds; r++) {
      const d = note(`steady round ${r}, one down`, await measured(meter, log, () => steady(0)));
      downRounds.push(d);
      log(
        `round ${r}/${opts.rounds} ${STEADY_EVENTS_PER_S} events/s, ${paths[0]} answering 500: others' p50 ${d.latency.p50} ms, ` +
          `p99 ${d.latency.p99} ms (${cpuText(d.cpu)})`,
      );
    }
    const bestP99 = (rs: Steady[]) => rs.reduce((a, b) => (b.latency.p99 < a.latency.p99 ? b : a));
    const allHealthy = bestP99(healthyRounds);
    // The targets hold in every round, so the checks take the worst one.
    const worstService = serviceRounds.reduce((a, b) => (b.rate < a.rate ? b : a));
    const worstHealthy = healthyRounds.reduce((a, b) => (b.latency.p99 > a.latency.p99 ? b : a));
    const oneDown = bestP99(downRounds);

    // What the failing subscription looks like after the run: one probe at a time.
    const probe = connect(url);
    let downState: Record<string, unknown> = {};
    try {
      const [row] = await probe`
        select s.consecutive_failures, s.status,
          (select count(*) from webhook_deliveries d where d.subscription_id = s.id and d.status = 'pending')::int as pending,
          (select count(*) from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
            where d.subscription_id = s.id and a.outcome = 'response' and a.response_status = 500)::int as failed_attempts
        from webhook_subscriptions s where s.url = ${receiver.url + paths[0]!}`;
      downState = row ?? {};
    } finally {
      await probe.end();
    }

    const worst = interference.reduce((a, b) => ((b.cpu?.othersCores ?? 0) > (a.cpu?.othersCores ?? 0) ? b : a));
    const warnings: string[] = [];
    if (service.build.stale) {
      warnings.push(`the service's build (${service.build.builtAt}) is older than its sources: rerun with --rebuild to measure the current code`);
    }
    if ((worst.cpu?.othersCores ?? 0) > INTERFERENCE_CORES) {
      warnings.push(`other processes used up to ${worst.cpu!.othersCores} cores during a measurement (${worst.what}): figures are understated; rerun on a quiet machine`);
    }
    const perDelivery = (c: CpuUse | undefined, n: number, s: number, part: string) => (c ? round2(((c.parts[part] ?? 0) * s * 1000) / n) : NaN);
    const downRatio = round2(oneDown.latency.p99 / allHealthy.latency.p99);
    return {
      figures: [
        {
          name: "bare loop: sign + POST, same payloads and receiver",
          value: bestBare.rate,
          unit: `deliveries/s (${sendConcurrency} in flight, as ${workers} workers × ${LOCAL_RUNNER_CONCURRENCY})`,
        },
        { name: "service, local runner", value: bestService.rate, unit: `deliveries/s (${bestService.deliveries} in ${bestService.durationS} s)` },
        { name: "  worst round", value: worstService.rate, unit: "deliveries/s" },
        { name: "  ratio service ÷ bare loop", value: `${round2(bestService.rate / bestBare.rate)}×` },
        { name: "  after the writes ended", value: bestService.tailRate, unit: `deliveries/s (the burst of writes took ${bestService.writesS} s)` },
        {
          name: "CPU per delivery: service / PostgreSQL / receiver",
          value:
            `${perDelivery(bestService.cpu, bestService.deliveries, bestService.durationS, "service")} / ` +
            `${perDelivery(bestService.cpu, bestService.deliveries, bestService.durationS, "postgres")} / ` +
            `${perDelivery(bestService.cpu, bestService.deliveries, bestService.durationS, "receiver")} ms (bare loop: ` +
            `${perDelivery(bestBare.cpu, bestBare.deliveries, bestBare.durationS, "bench")} ms sending)`,
        },
        { name: `write → arrival at ${STEADY_EVENTS_PER_S} events/s, best round: p50 / p90 / p99`, value: `${allHealthy.latency.p50} / ${allHealthy.latency.p90} / ${allHealthy.latency.p99}`, unit: "ms" },
        { name: "  worst round: p50 / p90 / p99", value: `${worstHealthy.latency.p50} / ${worstHealthy.latency.p90} / ${worstHealthy.latency.p99}`, unit: "ms" },
        {
          name: "  one subscription answering 500, others, best round: p50 / p90 / p99",
          value: `${oneDown.latency.p50} / ${oneDown.latency.p90} / ${oneDown.latency.p99}`,
          unit: "ms",
        },
        {
          name: "  the failing subscription afterwards",
          value: `${String(downState.consecutive_failures)} consecutive failures, ${String(downState.failed_attempts)} attempts, ${String(downState.pending)} pending`,
        },
        { name: "setup", value: `${APPS} subscriptions; burst writes fan out to all ${APPS}, steady writes to one each; ${opts.rounds} rounds` },
        { name: "other processes' CPU, worst measurement", value: worst.cpu ? `${worst.cpu.othersCores} cores (${worst.what})` : "unknown" },
      ],
      warnings,
      checks: [
        check("sustained deliveries/s, every round", worstService.rate, "≥", 1000, "req/s"),
        check(`p99 write → arrival at ${STEADY_EVENTS_PER_S} events/s, every round`, worstHealthy.latency.p99, "<", 250, "ms"),
        check("p99 with one subscription down vs all healthy", downRatio, "≤", 1.5, "×"),
      ],
      details: {
        world: { ...world.counts, reused: world.reused },
        build: service.build,
        throughput: { service: serviceRounds, bare: bareRounds, burstWrites, concurrency: sendConcurrency, workers },
        steady: { allHealthy: healthyRounds, oneDown: downRounds, downSubscription: downState },
        cpu: interference,
      },
    };
  } finally {
    await agent.close();
    receiver.stop();
    await service.server.stop();
  }
}


export const webhooks: Scenario = {
  name: "webhooks",
  summary: "local runner deliveries/s vs a bare sign-and-POST loop; write → arrival p99; one subscription down",
  run,
};
