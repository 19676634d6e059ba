// oauth-token: the token endpoint and the JWT read path, side by side in one run.
//
// Targets, each in every round (not only the best one): POST /oauth/token with
// grant_type=client_credentials (HTTP Basic, a confidential app) reaches ≥ 90 % of the req/s,
// in the same round, of a bare Next.js route handler that only
// parses the form and signs the same kind of JWT (bench/bare-next/app/sign); the ratio to
// panva's oidc-provider doing the same on plain Node is reported; GET /v1/athletes/me with a
// JWT access token is within 10 % of the same call with a PAT.
//
// The service and the bare app run under the same launcher (scripts/serve.mjs, what `npm start`
// runs: one worker per core over PostgreSQL); `BENCH_LAUNCHER=next-start` or `WEB_CONCURRENCY=N`
// compare other configurations. oidc-provider runs as one plain Node process, as its own docs
// set it up.
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { decodeJwt, importJWK, SignJWT, type JWK } from "jose";
import { CpuMeter, cpuPerRequest, type CpuUse } from "./lib/cpu";
import { databaseUrl, BENCH_DB } from "./lib/database";
import { getJson, throughput, type Target } from "./lib/load";
import { throughputInTurns, TURN_S } from "./lib/turns";
import { freePort } from "./lib/next-server";
import { REPO_ROOT } from "./lib/paths";
import { startProcess } from "./lib/processes";
import { checkEvery, type ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";
import { startBare, startService } from "./lib/servers";
import { createBenchApp, createBenchGrant, createBenchToken, prepareWorld, readSigningKey, resetRateLimits, resetSigningKeys } from "./lib/world";

/** The service's SECRETS_KEY in this scenario, so the bench can read the signing key it seals. */
const BENCH_SECRETS_KEY = "bench-oauth-token-secrets-key";

/** Its own small database: this scenario needs a few athletes, not api-read's million rows. */
const DB_NAME = `${BENCH_DB}_oauth`;
const WORLD = { athletes: 100, activitiesEach: 10, bigAthleteActivities: 10, version: 1 };
const INTERFERENCE_CORES = 0.2;
const round2 = (n: number) => Math.round(n * 100) / 100;

type Key = "sign" | "token" | "oidc" | "mePat" | "meJwt";
const LABELS: Record<Key, string> = {
  sign: "bare Next.js: form + sign",
  token: "service POST /oauth/token",
  oidc: "oidc-provider POST /token",
  mePat: "service /v1/athletes/me, PAT",
  meJwt: "service /v1/athletes/me, JWT",
};

async function postForm(target: Target): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(target.url, { method: "POST", headers: target.headers, body: target.body });
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new Error(`${target.url}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
}

async function tokenFrom(target: Target, what: string): Promise<string> {
  const { status, json } = await postForm(target);
  if (status !== 200 || typeof json.access_token !== "string") throw new Error(`${what}: HTTP ${status}: ${JSON.stringify(json).slice(0, 300)}`);
  return json.access_token;
}

/** oidc-provider on plain Node with the bench app as its one client (bench/oidc-provider/server.mjs). */
async function startOidcProvider(app: { clientId: string; secret: string }, log: (s: string) => void) {
  const port = await freePort();
  const proc = startProcess(process.execPath, [path.join(REPO_ROOT, "bench", "oidc-provider", "server.mjs")], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: "production", PORT: String(port), CLIENT_ID: app.clientId, CLIENT_SECRET: app.secret },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`oidc-provider exited before it was ready:\n${proc.output()}`);
    try {
      const res = await fetch(`${url}/.well-known/openid-configuration`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`oidc-provider was not ready within 30 s:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  log(`oidc-provider on ${url} (one plain Node process)`);
  return { url, pid: proc.child.pid!, stop: proc.stop };
}

/**
 * An access token as an authorization-code exchange would issue it (lib/oauth/access-token.ts):
 * signed with the service's own key, its issuer and audience copied from a token the service
 * issued, naming a real grant and family.
 */
async function mintAthleteJwt(url: string, serviceToken: string, t: { userId: string; clientId: string; grantId: string; familyId: string; scope: string }) {
  const key = await readSigningKey(url, BENCH_SECRETS_KEY);
  if (!key) throw new Error("the service has no signing key after issuing a token");
  const { iss, aud } = decodeJwt(serviceToken);
  return new SignJWT({ client_id: t.clientId, scope: t.scope, gid: t.grantId, fam: t.familyId })
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: key.kid })
    .setIssuer(iss!)
    .setSubject(t.userId)
    .setAudience(aud as string)
    .setIssuedAt()
    .setExpirationTime("3600s")
    .setJti(randomUUID())
    .sign(await importJWK(key.privateJwk as JWK, "ES256"));
}

async function run(opts: Parameters<Scenario["run"]>[0], log: (s: string) => void): Promise<ScenarioReport> {
  const url = databaseUrl(DB_NAME);
  const world = await prepareWorld(url, DB_NAME, WORLD, log);
  const athleteId = world.typicalAthleteId;
  const pat = await createBenchToken(url, athleteId, ["athlete.read"]);
  const app = await createBenchApp(url, athleteId);
  const grant = await createBenchGrant(url, app.clientId, athleteId, ["athlete.read"]);
  await resetRateLimits(url);
  await resetSigningKeys(url);

  const service = await startService({
    databaseUrl: url,
    rebuild: opts.rebuild,
    log,
    dir: opts.serviceDir,
    // The 600-a-minute limit of /oauth/token would refuse the load after a second.
    env: { NODE_ENV: "production", RATE_LIMIT_OAUTH_TOKEN: "100000000", SECRETS_KEY: BENCH_SECRETS_KEY },
  });
  const bare = await startBare({ log, mode: service.mode });
  const oidc = await startOidcProvider(app, log);
  log(`service on ${service.server.url} (${service.dir}), bare app on ${bare.server.url}; both: ${service.modeText}`);

  const meter = new CpuMeter(DB_NAME);
  meter.addGroup(service.server.pid, "service");
  meter.addGroup(bare.server.pid, "bare");
  meter.addGroup(oidc.pid, "oidc");
  const interference: { what: string; cpu?: CpuUse }[] = [];
  try {
    const form = {
      method: "POST" as const,
      body: "grant_type=client_credentials",
      headers: {
        Authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.secret)}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
    };
    const targets: Record<Key, Target> = {
      sign: { url: `${bare.server.url}/sign`, ...form },
      token: { url: `${service.server.url}/oauth/token`, ...form },
      oidc: { url: `${oidc.url}/token`, ...form },
      mePat: { url: `${service.server.url}/v1/athletes/me`, headers: { Authorization: `Bearer ${pat.token}` } },
      meJwt: { url: "", headers: {} },
    };

    // Sanity: each side answers with a token of the same shape; both /me calls reach the athlete.
    const shapes: Record<string, unknown> = {};
    const serviceToken = await tokenFrom(targets.token, "the service's /oauth/token");
    for (const key of ["sign", "token", "oidc"] as const) {
      const token = key === "token" ? serviceToken : await tokenFrom(targets[key], LABELS[key]);
      shapes[key] = Object.keys(decodeJwt(token)).sort().join(" ");
    }
    log(`JWT claims: ${Object.entries(shapes).map(([k, v]) => `${k}: ${v as string}`).join("; ")}`);
    const jwt = await mintAthleteJwt(url, serviceToken, { userId: athleteId, clientId: app.clientId, ...grant, scope: "athlete.read" });
    targets.meJwt = { url: targets.mePat.url, headers: { Authorization: `Bearer ${jwt}` } };
    for (const key of ["mePat", "meJwt"] as const) {
      const me = await getJson<{ id: string }>(targets[key]);
      if (me.id !== athleteId) throw new Error(`${LABELS[key]} answered for ${me.id}, not ${athleteId}`);
    }

    // Every worker of each server loads its route lazily and V8 optimises hot code: with one
    // worker per core, a short warm-up left the first rounds of whichever side came first slow.
    const warmS = Math.max(5, opts.durationS);
    log(`warming up (${warmS} s each)…`);
    for (const t of Object.values(targets)) await throughput(t, { connections: opts.connections, durationS: warmS });

    const keys = Object.keys(LABELS) as Key[];
    const rounds = await throughputInTurns(meter, log, targets, { ...opts, label: (k) => LABELS[k] }, (r, key, result) =>
      interference.push({ what: `${key} round ${r}`, cpu: result.cpu }),
    );
    const best = (key: Key) => rounds[key].reduce((a, b) => (b.rps > a.rps ? b : a));
    // A ratio per round, between measurements whose turns shared the round's time.
    const perRound = (key: Key, base: Key) => rounds[key].map((x, i) => round2(x.rps / rounds[base][i]!.rps));
    const rps = Object.fromEntries(keys.map((k) => [k, best(k).rps])) as Record<Key, number>;
    // CPU per request of the server under test (plus the bench database's PostgreSQL for the
    // service), steadier than req/s on a shared machine.
    const part: Record<Key, string> = { sign: "bare", token: "service", oidc: "oidc", mePat: "service", meJwt: "service" };
    const cpuMs = Object.fromEntries(
      keys.map((k) => {
        const r = best(k);
        const per = cpuPerRequest(r.cpu, r.requests, r.durationS);
        const withDb = part[k] === "service" ? (per?.postgres ?? 0) : 0;
        return [k, per ? round2((per[part[k]] ?? 0) + withDb) : NaN];
      }),
    ) as Record<Key, number>;

    const worst = interference.reduce((a, b) => ((b.cpu?.othersCores ?? 0) > (a.cpu?.othersCores ?? 0) ? b : a));
    const warnings: string[] = [];
    if (service.build.stale) warnings.push(`the service's build (${service.build.builtAt}) is older than its sources: rerun with --rebuild`);
    if ((worst.cpu?.othersCores ?? 0) > INTERFERENCE_CORES) {
      warnings.push(
        `other processes used up to ${worst.cpu!.othersCores} of ${os.availableParallelism()} cores during a measurement (${worst.what}): ` +
          `figures are understated; rerun on a quiet machine`,
      );
    }

    return {
      figures: [
        ...keys.map((k) => ({ name: LABELS[k], value: Math.round(rps[k]), unit: "req/s" })),
        { name: "service / oidc-provider (reported, no target)", value: `${round2(rps.token / rps.oidc)}×` },
        { name: "bare sign / oidc-provider (the framework's floor)", value: `${round2(rps.sign / rps.oidc)}×` },
        {
          name: "CPU per request, ms (service includes PostgreSQL)",
          value: keys.map((k) => `${k} ${cpuMs[k]}`).join(", "),
        },
        { name: "servers", value: `service and bare app: ${service.modeText}; oidc-provider: one Node process` },
        { name: "load", value: `${opts.connections} connections × ${opts.durationS} s in turns of ${TURN_S} s, ${opts.rounds} rounds` },
        { name: "other processes' CPU, worst measurement", value: worst.cpu ? `${worst.cpu.othersCores} cores (${worst.what})` : "unknown" },
      ],
      warnings,
      checks: [
        checkEvery("POST /oauth/token vs bare form + sign req/s, every round", perRound("token", "sign"), "≥", 0.9, "×"),
        checkEvery("/athletes/me with a JWT vs with a PAT req/s, every round", perRound("meJwt", "mePat"), "≥", 0.9, "×"),
      ],
      details: {
        mode: { service: service.mode, bare: bare.mode, oidcProvider: "node bench/oidc-provider/server.mjs" },
        claims: shapes,
        builds: { service: service.build, bare: bare.build },
        throughput: rounds,
        cpuMsPerRequest: cpuMs,
        cpu: interference,
      },
    };
  } finally {
    await Promise.all([bare.server.stop(), service.server.stop(), oidc.stop()]);
  }
}


export const oauthToken: Scenario = {
  name: "oauth-token",
  summary: "POST /oauth/token (client credentials) vs a bare sign handler and oidc-provider; /me with a JWT vs a PAT",
  run,
};
