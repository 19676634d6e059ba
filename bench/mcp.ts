// mcp: a tools/call of list_activities against GET /v1/athletes/me/activities with the same page
// size, on api-read's world (PostgreSQL, 1,000,000 activities across 10,000 athletes).
//
// Target, in every round (not the best one): the tool call ≥ 0.7× the list's req/s in the same
// round. Both carry the same PAT (a PAT works at /mcp as at /v1) and read the same page.
import { PAGE_SIZE, WORLD } from "./api-read";
import { databaseUrl, BENCH_DB } from "./lib/database";
import { CpuMeter } from "./lib/cpu";
import { getJson, throughput, type Target } from "./lib/load";
import { throughputInTurns, TURN_S } from "./lib/turns";
import { checkEvery, type ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";
import { startService } from "./lib/servers";
import { createBenchToken, prepareWorld, resetRateLimits } from "./lib/world";

const round2 = (n: number) => Math.round(n * 100) / 100;

async function run(opts: Parameters<Scenario["run"]>[0], log: (s: string) => void): Promise<ScenarioReport> {
  const url = databaseUrl();
  const world = await prepareWorld(url, BENCH_DB, WORLD, log);
  const token = await createBenchToken(url, world.typicalAthleteId, ["athlete.read", "activities.read"]);
  await resetRateLimits(url);
  const service = await startService({ databaseUrl: url, rebuild: opts.rebuild, log, dir: opts.serviceDir });
  const meter = new CpuMeter(BENCH_DB);
  meter.addGroup(service.server.pid, "service");
  try {
    const auth = { Authorization: `Bearer ${token.token}` };
    const targets = {
      list: { url: `${service.server.url}/v1/athletes/me/activities?limit=${PAGE_SIZE}`, headers: auth },
      tool: {
        url: `${service.server.url}/mcp`,
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_activities", arguments: { limit: PAGE_SIZE } } }),
      },
    } satisfies Record<string, Target>;

    // Sanity: the tool answers the same page as the list.
    const listed = await getJson<{ data: { id: string }[] }>(targets.list);
    const res = await fetch(targets.tool.url, { method: "POST", headers: targets.tool.headers, body: targets.tool.body });
    const called = (await res.json()) as { result?: { structuredContent?: { data: { id: string }[] }; isError?: boolean } };
    const ids = called.result?.structuredContent?.data.map((a) => a.id);
    if (res.status !== 200 || called.result?.isError || JSON.stringify(ids) !== JSON.stringify(listed.data.map((a) => a.id))) {
      throw new Error(`tools/call list_activities did not answer the list's page: HTTP ${res.status} ${JSON.stringify(called).slice(0, 300)}`);
    }

    log("warming up…");
    for (const t of Object.values(targets)) await throughput(t, { connections: opts.connections, durationS: 3 });
    const rounds = await throughputInTurns(meter, log, targets, opts);
    const ratios = rounds.tool.map((t, i) => round2(t.rps / rounds.list[i]!.rps));
    const warnings = service.build.stale ? [`the service's build (${service.build.builtAt}) is older than its sources: rerun with --rebuild`] : [];
    return {
      figures: [
        { name: `GET /v1/athletes/me/activities?limit=${PAGE_SIZE}, per round`, value: rounds.list.map((r) => Math.round(r.rps)).join(" / "), unit: "req/s" },
        { name: `tools/call list_activities {limit: ${PAGE_SIZE}}, per round`, value: rounds.tool.map((r) => Math.round(r.rps)).join(" / "), unit: "req/s" },
        { name: "  tool ÷ list, per round", value: ratios.join(" / "), unit: "×" },
        { name: "load", value: `${opts.connections} connections × ${opts.durationS} s in turns of ${TURN_S} s, ${opts.rounds} rounds` },
      ],
      warnings,
      checks: [checkEvery("tools/call list_activities vs GET …/activities req/s, every round", ratios, "≥", 0.7, "×")],
      details: { throughput: rounds },
    };
  } finally {
    await service.server.stop();
  }
}

export const mcp: Scenario = {
  name: "mcp",
  summary: "tools/call list_activities on /mcp vs GET /v1/athletes/me/activities, same page size",
  run,
};
