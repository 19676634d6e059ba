// api-read: the read path of /v1 against a bare Next.js route handler, over PostgreSQL with
// 1,000,000 activities across 10,000 athletes.
//
// Targets, each in every round (not the best one): GET /v1/athletes/me with a PAT ≥ 75 % of the
// bare handler's req/s in the same round; GET /v1/athletes/me/activities?limit=50 ≥ 50 %;
// p99 < 50 ms for both at half their max load; page 1 and page 100 of a 10,000-activity
// athlete within 1.5× of each other.
import os from "node:os";
import { databaseUrl, BENCH_DB } from "./lib/database";
import { CpuMeter, cpuPerRequest, cpuText, measured, type CpuUse } from "./lib/cpu";
import { atRate, getJson, sequential, throughput, type RateResult, type Target } from "./lib/load";
import { throughputInTurns, TURN_S, warmUpInTurns } from "./lib/turns";
import { check, checkEvery, type ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";
import { startBare, startService } from "./lib/servers";
import { createBenchToken, prepareWorld, resetRateLimits } from "./lib/world";

export const WORLD = { athletes: 10_000, activitiesEach: 100, bigAthleteActivities: 10_000, version: 1 };
export const PAGE_SIZE = 50;
/** Seconds of the same open loop before each half-load measurement counts (`atRate`'s `warmupS`). */
export const HALF_LOAD_WARMUP_S = 3;
const DEEP_PAGE = 100;

type ActivityPage = { data: { id: string }[]; next_cursor: string | null };

/** Other work above this (cores, averaged over a measurement) makes a figure suspect. */
const INTERFERENCE_CORES = 0.2;
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

async function run(opts: Parameters<Scenario["run"]>[0], log: (s: string) => void): Promise<ScenarioReport> {
  const url = databaseUrl();
  const world = await prepareWorld(url, BENCH_DB, WORLD, log);
  log(`database ready in ${world.seedSeconds.toFixed(1)} s (${world.reused ? "reused" : "seeded"})`);
  const typical = await createBenchToken(url, world.typicalAthleteId, ["athlete.read", "activities.read"]);
  const big = await createBenchToken(url, world.bigAthleteId, ["activities.read"]);
  await resetRateLimits(url);

  const service = await startService({ databaseUrl: url, rebuild: opts.rebuild, log, dir: opts.serviceDir });
  const bare = await startBare({ log, mode: service.mode });
  log(`bare Next.js app on ${bare.server.url}, service on ${service.server.url} (${service.dir}); both: ${service.modeText}`);
  const meter = new CpuMeter(BENCH_DB);
  meter.addGroup(bare.server.pid, "bare");
  meter.addGroup(service.server.pid, "service");
  const interference: { what: string; cpu?: CpuUse }[] = [];
  const note = <T extends { cpu?: CpuUse }>(what: string, r: T): T => {
    interference.push({ what, cpu: r.cpu });
    return r;
  };
  try {
    const auth = (t: { token: string }) => ({ Authorization: `Bearer ${t.token}` });
    const targets = {
      bare: { url: `${bare.server.url}/bare` },
      me: { url: `${service.server.url}/v1/athletes/me`, headers: auth(typical) },
      list: { url: `${service.server.url}/v1/athletes/me/activities?limit=${PAGE_SIZE}`, headers: auth(typical) },
    } satisfies Record<string, Target>;

    // Sanity: the service answers for the seeded athlete, with full pages.
    const me = await getJson<{ id: string }>(targets.me);
    if (me.id !== world.typicalAthleteId) throw new Error(`/v1/athletes/me answered for ${me.id}, not ${world.typicalAthleteId}`);
    const firstPage = await getJson<ActivityPage>(targets.list);
    if (firstPage.data.length !== PAGE_SIZE) throw new Error(`the activity list returned ${firstPage.data.length} items, not ${PAGE_SIZE}`);

    // One activity by id (reported, no target): the call an app makes for each activity it syncs.
    const activity: Target = { url: `${service.server.url}/v1/activities/${firstPage.data[0]!.id}`, headers: auth(typical) };
    const timed = { ...targets, activity };

    // Next.js loads route modules lazily and V8 optimises hot code: warm every side first.
    await warmUpInTurns(meter, log, timed, opts.connections);

    // Max throughput, in turns within each round so drift (thermal, other tenants) hits all alike.
    const rounds = await throughputInTurns(meter, log, timed, opts, (r, key, result) => note(`${key} round ${r}`, result));
    const bestRound = (key: keyof typeof timed) => rounds[key].reduce((a, b) => (b.rps > a.rps ? b : a));
    const bareRps = bestRound("bare").rps;
    const meRps = bestRound("me").rps;
    const listRps = bestRound("list").rps;
    // CPU per request is far less sensitive than req/s to other work on the machine: a
    // cross-check of the ratios when the machine was not quiet.
    const cpuMs = (key: keyof typeof targets) => {
      const r = bestRound(key);
      const per = cpuPerRequest(r.cpu, r.requests, r.durationS);
      const server = per ? (per[key === "bare" ? "bare" : "service"] ?? 0) + (key === "bare" ? 0 : (per.postgres ?? 0)) : NaN;
      return { server: round2(server), detail: per ?? {} };
    };
    const cpu = { bare: cpuMs("bare"), me: cpuMs("me"), list: cpuMs("list") };

    // Latency at half of each endpoint's own max (its median round), open loop, once per round.
    // The bare handler is measured the same way in each round, as a reference and not a target:
    // it tells whether this host and Next.js themselves hold a p99 under 50 ms at half load.
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const halfRuns: Record<"bare" | "me" | "list", RateResult[]> = { bare: [], me: [], list: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const key of ["bare", "me", "list"] as const) {
        const rps = Math.round(median(rounds[key].map((x) => x.rps)) / 2);
        const h = note(`${key} at half load, round ${r}`, await measured(meter, log, () => atRate(targets[key], { rps, durationS: opts.durationS, warmupS: HALF_LOAD_WARMUP_S })));
        log(`round ${r}/${opts.rounds} ${key.padEnd(4)} at ${h.targetRps} req/s: p50 ${h.latencyMs.p50} ms, p99 ${h.latencyMs.p99} ms (${cpuText(h.cpu)})`);
        halfRuns[key].push(h);
      }
    }
    const meHalf = halfRuns.me.reduce((a, b) => (b.latencyMs.p99 > a.latencyMs.p99 ? b : a));
    const listHalf = halfRuns.list.reduce((a, b) => (b.latencyMs.p99 > a.latencyMs.p99 ? b : a));
    const bareHalf = halfRuns.bare.reduce((a, b) => (b.latencyMs.p99 > a.latencyMs.p99 ? b : a));

    // Deep pagination: walk to page 100 once, then time page 1 and page 100 alone.
    const pageUrl = (cursor?: string) =>
      `${service.server.url}/v1/athletes/me/activities?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    let cursor: string | undefined;
    for (let p = 1; p < DEEP_PAGE; p++) {
      const page = await getJson<ActivityPage>({ url: pageUrl(cursor), headers: auth(big) });
      if (!page.next_cursor) throw new Error(`the big athlete's list ended at page ${p}`);
      cursor = page.next_cursor;
    }
    const page1: Target = { url: pageUrl(), headers: auth(big) };
    const page100: Target = { url: pageUrl(cursor), headers: auth(big) };
    const deep = await getJson<ActivityPage>(page100);
    if (deep.data.length !== PAGE_SIZE) throw new Error(`page ${DEEP_PAGE} had ${deep.data.length} items`);
    const pageRuns = { page1: [] as number[], page100: [] as number[] };
    const pageDurationS = Math.max(2, Math.round(opts.durationS / 2));
    for (let r = 0; r < 2; r++) {
      for (const [key, target] of [["page1", page1], ["page100", page100]] as const) {
        await throughput(target, { connections: 1, durationS: 1 }); // warm this exact query
        const s = note(`${key} one at a time`, await measured(meter, log, () => sequential(target, { durationS: pageDurationS })));
        pageRuns[key].push(s.latencyMs.p50);
      }
    }
    const p1 = Math.min(...pageRuns.page1);
    const p100 = Math.min(...pageRuns.page100);
    log(`page 1 p50 ${p1} ms, page ${DEEP_PAGE} p50 ${p100} ms (one request at a time)`);

    const worst = interference.reduce((a, b) => ((b.cpu?.othersCores ?? 0) > (a.cpu?.othersCores ?? 0) ? b : a));
    const warnings: string[] = [];
    if (service.build.stale) {
      warnings.push(`the service's build (${service.build.builtAt}) is older than its sources: rerun with --rebuild to measure the current code`);
    }
    if ((worst.cpu?.othersCores ?? 0) > INTERFERENCE_CORES) {
      warnings.push(
        `other processes used up to ${worst.cpu!.othersCores} of ${machineCores()} cores during a measurement (${worst.what}): ` +
          `figures are understated; rerun on a quiet machine`,
      );
    }

    // Each round's ratio against the bare handler of the same round (their turns shared its time).
    const perRound = (key: "me" | "list" | "activity") => rounds[key].map((x, i) => round2(x.rps / rounds.bare[i]!.rps));
    const pageRatio = round2(Math.max(p1, p100) / Math.min(p1, p100));
    return {
      figures: [
        { name: "bare Next.js handler", value: Math.round(bareRps), unit: "req/s" },
        { name: "GET /v1/athletes/me", value: Math.round(meRps), unit: "req/s" },
        { name: `GET /v1/athletes/me/activities?limit=${PAGE_SIZE}`, value: Math.round(listRps), unit: "req/s" },
        { name: "GET /v1/activities/{id} (reported, no target)", value: Math.round(bestRound("activity").rps), unit: "req/s" },
        { name: "  ÷ bare, each round", value: perRound("activity").join(" / "), unit: "×" },
        { name: `  me at ${meHalf.targetRps} req/s: p50 / p99, worst round`, value: `${meHalf.latencyMs.p50} / ${meHalf.latencyMs.p99}`, unit: "ms" },
        { name: `  list at ${listHalf.targetRps} req/s: p50 / p99, worst round`, value: `${listHalf.latencyMs.p50} / ${listHalf.latencyMs.p99}`, unit: "ms" },
        {
          name: `  bare at ${bareHalf.targetRps} req/s (reference): p50 / p99, worst round; p99 per round`,
          value: `${bareHalf.latencyMs.p50} / ${bareHalf.latencyMs.p99}; ${halfRuns.bare.map((h) => h.latencyMs.p99).join(" / ")}`,
          unit: "ms",
        },
        { name: `page 1 / page ${DEEP_PAGE}, one at a time, p50`, value: `${p1} / ${p100}`, unit: "ms" },
        {
          name: "server CPU per request: bare / me / list",
          value: `${cpu.bare.server} / ${cpu.me.server} / ${cpu.list.server} ms (service + PostgreSQL)`,
        },
        {
          name: "  as a cost ratio, bare ÷ endpoint",
          value: `me ${round2(cpu.bare.server / cpu.me.server)}×, list ${round2(cpu.bare.server / cpu.list.server)}×`,
        },
        { name: "load", value: `${opts.connections} connections × ${opts.durationS} s in turns of ${TURN_S} s, ${opts.rounds} rounds` },
        { name: "other processes' CPU, worst measurement", value: worst.cpu ? `${worst.cpu.othersCores} cores (${worst.what})` : "unknown" },
      ],
      warnings,
      checks: [
        checkEvery("/athletes/me vs bare req/s, every round", perRound("me"), "≥", 0.75, "×"),
        checkEvery(`/activities?limit=${PAGE_SIZE} vs bare req/s, every round`, perRound("list"), "≥", 0.5, "×"),
        checkEvery("/athletes/me p99 at half load, every round", halfRuns.me.map((h) => h.latencyMs.p99), "<", 50, "ms"),
        checkEvery(`/activities?limit=${PAGE_SIZE} p99 at half load, every round`, halfRuns.list.map((h) => h.latencyMs.p99), "<", 50, "ms"),
        check(`page ${DEEP_PAGE} vs page 1 latency`, pageRatio, "≤", 1.5, "×"),
      ],
      details: {
        world: { ...world.counts, reused: world.reused, seedSeconds: round1(world.seedSeconds) },
        builds: { service: service.build, bare: bare.build },
        throughput: rounds,
        cpuMsPerRequest: cpu,
        halfLoad: halfRuns,
        pages: { p50Ms: pageRuns, deepPageCursor: cursor },
        cpu: interference,
      },
    };
  } finally {
    await Promise.all([bare.server.stop(), service.server.stop()]);
  }
}

const machineCores = () => os.availableParallelism();

export const apiRead: Scenario = {
  name: "api-read",
  summary: "GET /v1/athletes/me and /activities vs a bare Next.js handler; deep pagination",
  run,
};
