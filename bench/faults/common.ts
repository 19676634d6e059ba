// What the fault scenario's parts share: a scratch database each, people and apps written
// straight into it, HTTP calls to the service, and the service itself started with its output
// watched for anything thrown uncaught.
import { randomBytes } from "node:crypto";
import { hash } from "@node-rs/argon2";
import { Agent, request } from "undici";
import { randomBase62, sha256Hex } from "../../lib/crypto/random";
import { generateToken } from "../../lib/tokens/format";
import type { Scope } from "../../lib/auth/scopes";
import { connect, databaseUrl, ensureDatabase, migrateDatabase, type Sql } from "../lib/database";
import type { BenchOptions } from "../lib/scenario";
import { startService, type Started } from "../lib/servers";

export type Log = (line: string) => void;

export type FaultOptions = BenchOptions & {
  /** The issue's counts × this (quick runs use less than 1). */
  scale: number;
};

/** The issue's count scaled for a quick run, at least `min`. */
export const scaled = (n: number, opts: FaultOptions, min = 1) => Math.max(min, Math.round(n * opts.scale));

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const round2 = (n: number) => Math.round(n * 100) / 100;

/** A database of its own for one part of the run, dropped at the end (kept with BENCH_KEEP_DB=1). */
export async function scratchDatabase(tag: string): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `aas_faults_${tag}_${randomBytes(3).toString("hex")}`;
  await ensureDatabase(name, { fresh: true });
  const url = databaseUrl(name);
  await migrateDatabase(url);
  return {
    name,
    url,
    drop: async () => {
      // BENCH_KEEP_DB=1 keeps it, to look at what a part left behind.
      if (process.env.BENCH_KEEP_DB) return;
      const admin = connect(databaseUrl("postgres"));
      try {
        await admin.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

export async function withSql<T>(url: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = connect(url);
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

export type Person = { id: string; email: string; password: string; token: string };

/** Subscribed athletes (the same argon2id the service uses), each with a PAT of `scopes`. */
export async function createPeople(url: string, n: number, scopes: Scope[], tag = "p"): Promise<Person[]> {
  const password = "fault-scenario-password";
  const passwordHash = await hash(password, { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
  const people: Person[] = [];
  await withSql(url, async (sql) => {
    for (let i = 0; i < n; i++) {
      const id = `ath_${randomBase62(22)}`;
      const email = `${tag}${i}-${randomBytes(3).toString("hex")}@faults.example`;
      const token = generateToken("pat");
      await sql`insert into users (id, email, name, password_hash) values (${id}, ${email}, ${`Fault ${tag}${i}`}, ${passwordHash})`;
      await sql`insert into athlete_profiles (user_id, timezone, has_subscription) values (${id}, 'Europe/Oslo', true)`;
      await sql`
        insert into personal_access_tokens (id, user_id, name, token_hash, last_four, scopes)
        values (${`pat_${randomBase62(22)}`}, ${id}, 'faults', ${sha256Hex(token)}, ${token.slice(-4)}, ${scopes})`;
      people.push({ id, email, password, token });
    }
  });
  return people;
}

export type App = { clientId: string; secret: string };

export async function createApps(url: string, n: number, tag: string, ownerId?: string): Promise<App[]> {
  const apps = Array.from({ length: n }, (_, i) => ({ clientId: `faults-${tag}-${i}`, secret: generateToken("clientSecret") }));
  await withSql(url, async (sql) => {
    for (const a of apps) {
      await sql`
        insert into oauth_clients (client_id, owner_id, name, kind, secret_hash, redirect_uris)
        values (${a.clientId}, ${ownerId ?? null}, ${`Faults ${a.clientId}`}, 'confidential', ${sha256Hex(a.secret)}, ${["http://127.0.0.1:8976/callback"]})`;
    }
  });
  return apps;
}

/** What an athlete's consent leaves behind: a grant of `scopes` to the app. */
export async function grant(url: string, clientId: string, userIds: string[], scopes: Scope[]): Promise<void> {
  await withSql(url, async (sql) => {
    for (const userId of userIds) {
      await sql`insert into oauth_grants (id, client_id, user_id, scopes) values (${`grt_${randomBase62(22)}`}, ${clientId}, ${userId}, ${scopes})`;
    }
  });
}

export type Answer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** HTTP calls to the service, answered or failed (a refused connection is an `Error`). */
export class Client {
  readonly agent = new Agent({ connections: 64, keepAliveTimeout: 10_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  constructor(public base: string) {}

  async call(method: string, path: string, o: { headers?: Record<string, string>; body?: string; timeoutMs?: number } = {}): Promise<Answer> {
    const res = await request(this.base + path, {
      method: method as "GET",
      headers: o.headers,
      body: o.body,
      dispatcher: this.agent,
      signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async json(method: string, path: string, expect: number, o: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Record<string, unknown>> {
    const a = await this.call(method, path, {
      headers: { ...(o.body !== undefined ? { "content-type": "application/json" } : {}), ...o.headers },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    if (a.status !== expect) throw new Error(`${method} ${path}: HTTP ${a.status} (expected ${expect}): ${a.text.slice(0, 300)}`);
    return JSON.parse(a.text) as Record<string, unknown>;
  }

  async appToken(app: App): Promise<string> {
    const a = await this.call("POST", "/oauth/token", {
      headers: {
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    if (a.status !== 200) throw new Error(`client credentials for ${app.clientId}: HTTP ${a.status}: ${a.text.slice(0, 200)}`);
    return (JSON.parse(a.text) as { access_token: string }).access_token;
  }

  /** Subscribes `app` to `events` at `url` through the API, handshake included. */
  async subscribe(app: App, url: string, events: string[]): Promise<{ id: string; secret: string; token: string }> {
    const token = await this.appToken(app);
    const sub = await this.json("POST", "/v1/app/webhooks", 201, { headers: { authorization: `Bearer ${token}` }, body: { url, events } });
    return { id: sub.id as string, secret: sub.secret as string, token };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Lines of the service's output that say something was thrown and not caught. */
export const UNCAUGHT = /uncaught ?exception|unhandled ?rejection|Cannot read properties of null \(reading 'write'\)/i;

export type Service = Started & { uncaught: string[]; errors: string[]; kill: () => void };

/**
 * The service's production build over `url`, as `npm start` runs it, watching its output for
 * anything thrown uncaught. `kill()` sends SIGKILL to its whole process group.
 */
export async function startWatchedService(opts: FaultOptions, url: string, env: Record<string, string>, log: Log): Promise<Service> {
  const uncaught: string[] = [];
  const errors: string[] = [];
  const started = await startService({
    databaseUrl: url,
    rebuild: false,
    log,
    dir: opts.serviceDir,
    env: { SECRETS_KEY: "faults-scenario-secrets-key-0123456789", ...env } as Partial<NodeJS.ProcessEnv> as NodeJS.ProcessEnv,
    onOutput: (line) => {
      if (UNCAUGHT.test(line) && uncaught.length < 50) uncaught.push(line.slice(0, 500));
      // The service's own error lines (a 500's trace id and cause), a bounded few.
      if (line.includes('"level":"error"') && errors.length < 200) errors.push(line.slice(0, 1500));
    },
  });
  return {
    ...started,
    uncaught,
    errors,
    kill: () => {
      try {
        process.kill(-started.server.pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

/** `count` tasks run by `concurrency` workers, in order of `i`. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export function percentile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
