// 10,000 generated hostile requests (lib/testing/hostile-requests.ts: fast-check arbitraries)
// over every /v1, OAuth and console route of the production build, sent as raw bytes: zero
// 5xx, and every 4xx a problem document with a code of CONTRACT §3, or RFC 6749's error shape
// on /oauth/token and /oauth/revoke.
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { randomBase62 } from "../../lib/crypto/random";
import { familyOf, hostileRequest, judge, reproduction, serialize, type HostileContext, type HostileRequest } from "../../lib/testing/hostile-requests";
import { sendRaw } from "../../lib/testing/raw-http";
import { FaultReceiver } from "../lib/fault-receiver";
import { check, type Check, type Figure } from "../lib/report";
import { Client, createApps, createPeople, grant, pool, scaled, scratchDatabase, sleep, startWatchedService, withSql, type FaultOptions, type Log, type Service } from "./common";

const CONCURRENCY = 16;
const EXAMPLES_PER_RULE = 5;

/** Signs in over HTTP as a browser would (Auth.js credentials): the session's cookies. */
async function signIn(client: Client, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (setCookie: string | string[] | undefined) => {
    for (const c of [setCookie ?? []].flat()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const csrf = await client.call("GET", "/api/auth/csrf");
  keep(csrf.headers["set-cookie"]);
  const { csrfToken } = JSON.parse(csrf.text) as { csrfToken: string };
  const signedIn = await client.call("POST", "/api/auth/callback/credentials", {
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie(), origin: client.base },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: "/activities" }).toString(),
  });
  keep(signedIn.headers["set-cookie"]);
  const me = await client.call("GET", "/api/console/profile", { headers: { cookie: cookie() } });
  if (me.status !== 200) throw new Error(`sign-in over HTTP failed: /api/console/profile answered ${me.status}: ${me.text.slice(0, 200)}`);
  return cookie();
}

/** The group a violation is reported in: the family its target resolves to, the method and the rule it broke. */
function causeOf(r: HostileRequest, rule: string): string {
  return `${familyOf(r.target)}, ${/^[A-Z]+$/.test(r.method) ? r.method : "other methods"}: ${rule}`;
}

export async function generatedRequests(opts: FaultOptions, log: Log): Promise<{ figures: Figure[]; checks: Check[]; details: Record<string, unknown> }> {
  const count = scaled(10_000, opts, 50);
  const seed = Number(process.env.BENCH_FUZZ_SEED ?? randomBytes(4).readUInt32BE(0) & 0x7fffffff);
  const db = await scratchDatabase("fuzz");
  const receiver = await FaultReceiver.start(["main", "spare", "console"]);
  const client = new Client("");
  let service: Service | undefined;
  try {
    // A: the athlete whose PAT the /v1 requests carry, coach of a team with O; B: the person
    // signed in to the console, who owns an app, a PAT and a grant the fuzzer may delete.
    const [a, o, b] = await createPeople(db.url, 3, ["athlete.read", "activities.read", "activities.write", "metrics.read", "metrics.write", "teams.read"], "fuzz");
    const [main] = await createApps(db.url, 1, "fuzz");
    const [owned] = await createApps(db.url, 1, "fuzz-owned", b!.id);
    const publicClientId = "faults-fuzz-public";
    const teamId = `team_${randomBase62(22)}`;
    await withSql(db.url, async (sql) => {
      await sql`insert into oauth_clients (client_id, name, kind, redirect_uris) values (${publicClientId}, 'Faults public', 'public', ${["http://127.0.0.1/callback"]})`;
      await sql`insert into teams (id, name, created_by) values (${teamId}, 'Fuzz team', ${a!.id})`;
      await sql`insert into team_memberships (team_id, user_id, role, status, joined_at) values (${teamId}, ${a!.id}, 'coach', 'active', now()), (${teamId}, ${o!.id}, 'athlete', 'active', now())`;
    });
    await grant(db.url, main!.clientId, [a!.id], ["activities.read", "metrics.read"]);
    await grant(db.url, owned!.clientId, [b!.id], ["activities.read"]);
    service = await startWatchedService(
      opts,
      db.url,
      { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE_S: "1", DELIVERY_RUNNER: "local", RATE_LIMIT_OAUTH_TOKEN: "100000000" },
      log,
    );
    client.base = service.server.url;
    const hook = await client.subscribe(main!, receiver.url("main"), ["activity.created", "metric.created"]);
    receiver.setSecret("main", hook.secret);
    const spare = await client.subscribe(main!, receiver.url("spare"), ["activity.created"]);
    receiver.setSecret("spare", spare.secret);
    const consoleHook = await client.subscribe(owned!, receiver.url("console"), ["activity.created"]);
    receiver.setSecret("console", consoleHook.secret);
    const activity = await client.json("POST", "/v1/athletes/me/activities", 201, {
      headers: { authorization: `Bearer ${a!.token}` },
      body: { name: "Fuzz run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 },
    });
    let deliveryId = "";
    for (let i = 0; i < 100 && !deliveryId; i++) {
      const list = await client.json("GET", `/v1/app/webhooks/${hook.id}/deliveries`, 200, { headers: { authorization: `Bearer ${hook.token}` } });
      deliveryId = ((list.data as { id: string }[])[0]?.id ?? "") as string;
      if (!deliveryId) await sleep(100);
    }
    const [consoleGrant] = await withSql(db.url, (sql) => sql<{ id: string }[]>`select id from oauth_grants where user_id = ${b!.id}`);
    const [consoleToken] = await withSql(db.url, (sql) => sql<{ id: string }[]>`select id from personal_access_tokens where user_id = ${b!.id}`);
    const sessionCookie = await signIn(client, b!.email, b!.password);
    const host = new URL(client.base).host;
    const port = Number(new URL(client.base).port);
    const ctx: HostileContext = {
      host,
      athleteId: a!.id,
      otherAthleteId: o!.id,
      activityId: activity.id as string,
      teamId,
      webhookId: hook.id,
      spareWebhookId: spare.id,
      deliveryId,
      consoleTokenId: consoleToken!.id,
      consoleClientId: owned!.clientId,
      consoleWebhookId: consoleHook.id,
      consoleGrantId: consoleGrant!.id,
      pat: a!.token,
      appToken: hook.token,
      client: { id: main!.clientId, secret: main!.secret },
      publicClientId,
      sessionCookie,
    };
    log(`fuzz: ${count} requests generated with seed ${seed} (BENCH_FUZZ_SEED=${seed} repeats them), ${CONCURRENCY} at a time, against ${client.base}`);

    const requests = fc.sample(hostileRequest(ctx), { numRuns: count, seed });
    const byStatus: Record<string, number> = {};
    const byFamily: Record<string, number> = {};
    const byKind: Record<string, number> = {};
    const violations: { rule: string; route: string; request: HostileRequest; detail: string; cause: string }[] = [];
    const t0 = performance.now();
    let done = 0;
    await pool(requests.length, CONCURRENCY, async (i) => {
      const r = requests[i]!;
      const answer = await sendRaw(port, serialize(r, host), { halfClose: r.truncatedTransport, timeoutMs: 20_000 });
      const verdict = judge(r, answer);
      const status = answer.answered ? String(answer.status) : answer.error;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      byFamily[r.family] = (byFamily[r.family] ?? 0) + 1;
      if (verdict.ok) byKind[verdict.kind] = (byKind[verdict.kind] ?? 0) + 1;
      else violations.push({ rule: verdict.rule, route: `${r.method} ${r.route}`, request: r, detail: verdict.detail, cause: causeOf(r, verdict.rule) });
      if (++done % 1000 === 0) log(`fuzz: ${done}/${requests.length} sent, ${violations.length} violations so far`);
    });
    const seconds = (performance.now() - t0) / 1000;
    const after = await client.call("GET", "/v1/athletes/me", { headers: { authorization: `Bearer ${a!.token}` } });

    // The violations, grouped by cause, a few reproducible examples each.
    const groups = new Map<string, typeof violations>();
    for (const v of violations) groups.set(v.cause, [...(groups.get(v.cause) ?? []), v]);
    const examples = [...groups].map(([key, vs]) => ({
      key,
      count: vs.length,
      fivexx: vs.filter((v) => v.rule === "no 5xx").length,
      routes: new Set(vs.map((v) => v.route)).size,
      examples: vs.slice(0, EXAMPLES_PER_RULE).map((v) => ({
        request: `${v.request.method} ${v.request.target.slice(0, 160)}`,
        notes: v.request.notes,
        answer: v.detail.slice(0, 300),
        reproduce: reproduction(v.request, host).replace("PORT", "<port>"),
      })),
    }));
    examples.sort((x, y) => y.count - x.count);
    for (const e of examples) {
      log(`fuzz VIOLATION ×${e.count} (${e.fivexx} of them 5xx, over ${e.routes} routes): ${e.key}`);
      for (const x of e.examples.slice(0, 2)) log(`    ${x.request} [${x.notes.join("; ")}] → ${x.answer.slice(0, 200)}`);
    }
    const fivexx = Object.entries(byStatus).filter(([s]) => s.startsWith("5")).reduce((t, [, n]) => t + n, 0);
    const statusText = Object.entries(byStatus)
      .sort(([x], [y]) => x.localeCompare(y))
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ");
    log(`fuzz: ${requests.length} requests in ${Math.round(seconds)} s; answers ${statusText}`);

    return {
      figures: [
        { name: "fuzz: generated requests (seed)", value: `${requests.length} (${seed})` },
        { name: "fuzz: by family", value: Object.entries(byFamily).map(([f, n]) => `${f} ${n}`).join(", ") },
        { name: "fuzz: answers by status", value: statusText },
        ...examples.map((e) => ({ name: `fuzz: violations: ${e.key}`, value: `${e.count} (${e.fivexx} 5xx)` })),
      ],
      checks: [
        check("fuzz: 5xx answers", fivexx, "≤", 0, ""),
        check("fuzz: answers breaking the error-shape rules", violations.length, "≤", 0, ""),
        check("fuzz: GET /v1/athletes/me afterwards, HTTP status", after.status, "≤", 200, ""),
        check("fuzz: lines thrown uncaught in the service", service.uncaught.length, "≤", 0, ""),
      ],
      details: { seed, byStatus, byFamily, byKind, violations: examples, uncaught: service.uncaught, serviceErrors: service.errors },
    };
  } finally {
    await client.close();
    await service?.server.stop();
    await receiver.close();
    await db.drop().catch(() => {});
  }
}
