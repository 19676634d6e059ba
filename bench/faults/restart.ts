// PostgreSQL restarted under a steady write and read load: answers during the outage are 503
// problems with Retry-After, the service recovers by itself, and every write that got a 2xx
// is in the database afterwards.
import { execFileSync } from "node:child_process";
import { check, type Check, type Figure } from "../lib/report";
import { Client, createPeople, round2, scaled, scratchDatabase, sleep, startWatchedService, withSql, type FaultOptions, type Log } from "./common";

const WRITERS = 4;
const READERS = 4;
/** Each worker sends one request per period: 4 × 25/s writes and as many reads. */
const PERIOD_MS = 40;
/** How long PostgreSQL stays down each time: long enough for many requests to meet the outage. */
const OUTAGE_MS = 2_000;
const RECOVERY_DEADLINE_MS = 30_000;

type Sent = { kind: "write" | "read"; sentAt: number; doneAt: number; status: number | "error"; id?: string; name?: string };

/** The machine's PostgreSQL cluster (`15 main`), as pg_ctlcluster names it; BENCH_PG_CLUSTER overrides. */
function cluster(): [string, string] {
  const given = process.env.BENCH_PG_CLUSTER?.split(/\s+/);
  if (given?.length === 2) return [given[0]!, given[1]!];
  const line = execFileSync("pg_lsclusters", ["-h"], { encoding: "utf8" }).trim().split("\n")[0];
  const [version, name] = (line ?? "").split(/\s+/);
  if (!version || !name) throw new Error("pg_lsclusters lists no cluster; set BENCH_PG_CLUSTER='<version> <name>'");
  return [version, name];
}

function pgCtl(action: "stop" | "start", [version, name]: [string, string]): void {
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, name, action], { stdio: "pipe" });
}

export async function restartUnderLoad(opts: FaultOptions, log: Log): Promise<{ figures: Figure[]; checks: Check[]; details: Record<string, unknown> }> {
  const restarts = scaled(3, opts);
  const pg = cluster();
  const db = await scratchDatabase("restart");
  const client = new Client("");
  let service: Awaited<ReturnType<typeof startWatchedService>> | undefined;
  try {
    const people = await createPeople(db.url, WRITERS + READERS, ["athlete.read", "activities.read", "activities.write"], "restart");
    service = await startWatchedService(opts, db.url, {}, log);
    client.base = service.server.url;
    log(`restart: service on ${client.base}, database ${db.name}, PostgreSQL cluster ${pg.join(" ")}`);

    const sent: Sent[] = [];
    const bad503: string[] = [];
    const other5xx: string[] = [];
    let stop = false;
    let n = 0;
    const judge = (r: Sent, a: { status: number; headers: Record<string, unknown>; text: string }) => {
      if (a.status === 503) {
        let code = "";
        try {
          code = String((JSON.parse(a.text) as { code?: unknown }).code);
        } catch {
          // not JSON: reported below
        }
        const ok = a.headers["content-type"] === "application/problem+json" && /^[1-9]\d*$/.test(String(a.headers["retry-after"])) && code === "service_unavailable";
        if (!ok && bad503.length < 10) bad503.push(`${r.kind}: content-type ${String(a.headers["content-type"])}, Retry-After ${String(a.headers["retry-after"])}: ${a.text.slice(0, 200)}`);
      } else if (a.status >= 500 && other5xx.length < 10) {
        other5xx.push(`${r.kind} at +${Math.round(r.sentAt - t0)} ms: HTTP ${a.status}: ${a.text.slice(0, 300)}`);
      }
    };
    const worker = async (i: number, kind: Sent["kind"]) => {
      const p = people[i]!;
      const auth = { authorization: `Bearer ${p.token}` };
      for (let k = 0; !stop; k++) {
        const due = performance.now() + PERIOD_MS;
        const r: Sent = { kind, sentAt: performance.now(), doneAt: 0, status: "error" };
        try {
          if (kind === "write") {
            r.name = `restart ${++n}`;
            const a = await client.call("POST", "/v1/athletes/me/activities", {
              headers: { ...auth, "content-type": "application/json" },
              body: JSON.stringify({ name: r.name, sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 }),
              timeoutMs: 15_000,
            });
            r.status = a.status;
            if (a.status === 201) r.id = (JSON.parse(a.text) as { id: string }).id;
            judge(r, a);
          } else {
            const a = await client.call("GET", k % 2 ? "/v1/athletes/me" : "/v1/athletes/me/activities?limit=5", { headers: auth, timeoutMs: 15_000 });
            r.status = a.status;
            judge(r, a);
          }
        } catch {
          r.status = "error";
        }
        r.doneAt = performance.now();
        sent.push(r);
        await sleep(Math.max(0, due - performance.now()));
      }
    };
    const t0 = performance.now();
    const workers = [
      ...Array.from({ length: WRITERS }, (_, i) => worker(i, "write")),
      ...Array.from({ length: READERS }, (_, i) => worker(WRITERS + i, "read")),
    ];

    const cycles: { stopS: number; startS: number; downS: number; answeredDuring: number; recoveredS: number; writeRecoveredS: number; readRecoveredS: number }[] = [];
    try {
      await sleep(3_000);
      for (let c = 1; c <= restarts; c++) {
        const a = performance.now();
        pgCtl("stop", pg);
        const down = performance.now();
        await sleep(OUTAGE_MS);
        const b = performance.now();
        pgCtl("start", pg);
        const up = performance.now();
        // Recovered: the first request sent after PostgreSQL is back that succeeds, per kind.
        const firstOk = async (kind: Sent["kind"]) => {
          const deadline = up + RECOVERY_DEADLINE_MS;
          for (;;) {
            const ok = sent.find((s) => s.kind === kind && s.sentAt >= up && typeof s.status === "number" && s.status < 300);
            if (ok) return ok.doneAt;
            if (performance.now() > deadline) return NaN;
            await sleep(20);
          }
        };
        const [w, r] = await Promise.all([firstOk("write"), firstOk("read")]);
        const cycle = {
          stopS: round2((down - a) / 1000),
          startS: round2((up - b) / 1000),
          downS: round2((up - down) / 1000),
          answeredDuring: sent.filter((s) => s.doneAt >= down && s.doneAt <= up && s.status === 503).length,
          recoveredS: round2((Math.max(w, r) - up) / 1000),
          writeRecoveredS: round2((w - up) / 1000),
          readRecoveredS: round2((r - up) / 1000),
        };
        cycles.push(cycle);
        log(
          `restart ${c}/${restarts}: PostgreSQL stopped in ${cycle.stopS} s, down ${cycle.downS} s (${cycle.answeredDuring} answers 503 meanwhile), ` +
            `started in ${cycle.startS} s; first success after it was back: write +${cycle.writeRecoveredS} s, read +${cycle.readRecoveredS} s`,
        );
        await sleep(3_000);
      }
    } finally {
      stop = true;
      await Promise.all(workers);
    }

    const acked = sent.filter((s) => s.kind === "write" && s.status === 201);
    const ids = acked.map((s) => s.id!);
    const unackedNames = sent.filter((s) => s.kind === "write" && s.status !== 201).map((s) => s.name!);
    const { found, committedUnacked } = await withSql(db.url, async (sql) => {
      const [f] = await sql<{ n: number }[]>`select count(*)::int as n from activities where id = any(${ids})`;
      const [u] = await sql<{ n: number }[]>`select count(*)::int as n from activities where name = any(${unackedNames})`;
      return { found: f!.n, committedUnacked: u!.n };
    });
    const statuses: Record<string, number> = {};
    for (const s of sent) statuses[String(s.status)] = (statuses[String(s.status)] ?? 0) + 1;
    const recovered = cycles.map((c) => c.recoveredS);
    const worst = recovered.some((x) => !Number.isFinite(x)) ? NaN : Math.max(...recovered);
    const other = sent.filter((s) => typeof s.status === "number" && s.status >= 500 && s.status !== 503).length;
    const refused = sent.filter((s) => s.status === "error").length;
    log(`restart: ${acked.length} writes acknowledged, ${found} found; answers ${JSON.stringify(statuses)}`);

    return {
      figures: [
        { name: "restart: PostgreSQL restarts under load", value: restarts },
        { name: "restart: requests sent (writes + reads)", value: sent.length },
        { name: "restart: writes acknowledged (2xx)", value: acked.length },
        { name: "restart: acknowledged writes found afterwards", value: found },
        { name: "restart: writes not acknowledged that committed anyway", value: committedUnacked },
        { name: "restart: answers 503 (all problems with Retry-After)", value: statuses["503"] ?? 0 },
        { name: "restart: seconds to recover after PostgreSQL was back, each restart", value: recovered.join(", ") },
      ],
      checks: [
        check("restart: acknowledged writes lost", acked.length - found, "≤", 0, ""),
        check("restart: 5xx other than 503", other, "≤", 0, ""),
        check("restart: 503s without problem, code or Retry-After", bad503.length, "≤", 0, ""),
        check("restart: requests the service did not answer", refused, "≤", 0, ""),
        check("restart: lines thrown uncaught in the service", service.uncaught.length, "≤", 0, ""),
        check("restart: worst seconds to recover after PostgreSQL was back", worst, "≤", 5, ""),
      ],
      details: { cycles, statuses, bad503, other5xx, uncaught: service.uncaught, committedUnacked },
    };
  } finally {
    await client.close();
    await service?.server.stop();
    await db.drop().catch(() => {});
  }
}
