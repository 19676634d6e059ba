import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { boot, stopBoot } from "./boot";
import { closeDb, getDb, maskedUrl, openDatabase, rowsOf, setDbHandleForTests } from "./db/client";
import { postgresConnection } from "./db/postgres-url";
import { resetEnvForTests } from "./env";
import { resetKeyCacheForTests, signingKey } from "./oauth/keys";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BASE = process.env.TEST_DATABASE_URL;
const journal = (JSON.parse(readFileSync(path.join(ROOT, "drizzle/meta/_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] }).entries;

let exits: (string | number | null | undefined)[] = [];
let printed: string[] = [];
let logged: string[] = [];
const saved = { DATABASE_URL: process.env.DATABASE_URL, DATA_DIR: process.env.DATA_DIR, LOG_LEVEL: process.env.LOG_LEVEL, SECRETS_KEY: process.env.SECRETS_KEY };

beforeEach(() => {
  exits = [];
  printed = [];
  logged = [];
  vi.spyOn(process, "exit").mockImplementation(((code?: string | number | null) => void exits.push(code)) as never);
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void printed.push(args.join(" ")));
  vi.spyOn(process.stderr, "write").mockImplementation(((line: string) => (logged.push(String(line)), true)) as never);
  setDbHandleForTests(undefined);
});

afterEach(async () => {
  stopBoot();
  vi.restoreAllMocks();
  await closeDb();
  setDbHandleForTests(undefined);
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvForTests();
});

function configure(env: { DATABASE_URL?: string; DATA_DIR?: string }) {
  delete process.env.DATABASE_URL;
  delete process.env.DATA_DIR;
  Object.assign(process.env, env, { LOG_LEVEL: "info" });
  resetEnvForTests();
}

/** A new database on the TEST_DATABASE_URL server, its URL (with a password, to see it masked), and a connection to it. */
async function newDatabase() {
  const admin = postgres(postgresConnection(BASE!).url, { max: 1, onnotice: () => {} });
  const name = `aas_boot_${randomBytes(5).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(BASE!);
  url.pathname = `/${name}`;
  url.password = "not-shown";
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  return {
    name,
    url: url.toString(),
    sql,
    drop: async () => {
      await sql.end();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

function withoutDatabaseUrl(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, ...rest } = env;
  return rest;
}

describe("maskedUrl", () => {
  it("masks a password in the user part or a password parameter", () => {
    expect(maskedUrl("postgres://app:s3cr%40t@db:5432/aas?sslmode=require")).toBe("postgres://app:****@db:5432/aas?sslmode=require");
    expect(maskedUrl("postgresql://app@db/aas?password=x&max=4")).toBe("postgresql://app@db/aas?password=****&max=4");
    expect(maskedUrl("postgres://db/aas")).toBe("postgres://db/aas");
  });
});

describe.skipIf(!BASE)("start on PostgreSQL: what waiting cannot fix stops the service", () => {
  it("a database the server does not have: one sentence naming DATABASE_URL (password masked), exit 1", async () => {
    const url = new URL(BASE!);
    url.pathname = `/aas_missing_${randomBytes(4).toString("hex")}`;
    url.password = "not-shown";
    configure({ DATABASE_URL: url.toString() });
    await boot();
    expect(exits).toEqual([1]);
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain(`DATABASE_URL (${url.toString().replace(":not-shown@", ":****@")})`);
    expect(printed[0]).toMatch(/does not exist \(3D000\)\. Create that database/);
    expect(printed.join("") + logged.join("")).not.toContain("not-shown");
  });

  it("a role the server refuses: exit 1, naming DATABASE_URL and the code", async () => {
    const url = new URL(BASE!);
    url.username = `nobody_${randomBytes(3).toString("hex")}`;
    configure({ DATABASE_URL: url.toString() });
    await boot();
    expect(exits).toEqual([1]);
    expect(printed[0]).toMatch(/^DATABASE_URL \(.*\) is refused by the server: .*\((28000|28P01)\)/);
  });

  it("a server not reachable yet is retried (503 meanwhile), logged with message and code; a refusal met on a later attempt still stops it", async () => {
    configure({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/aas" });
    await boot();
    expect(exits).toEqual([]);
    const line = JSON.parse(logged.find((l) => l.includes("start-up failed"))!) as { error: string; code: string };
    expect(line.code).toBe("ECONNREFUSED");
    expect(line.error).not.toMatch(/^\w+: /);
    // The next attempt (a request's, a runner's) finds the server, which has no such database.
    const url = new URL(BASE!);
    url.pathname = "/aas_missing_later";
    configure({ DATABASE_URL: url.toString() });
    await expect(getDb()).rejects.toThrow(/3D000/);
    expect(exits).toEqual([1]);
  });

  /**
   * boot with the server not reachable and SEED_DEMO set; then the server comes up (here: the
   * setting now names a new database that answers), `meanwhile` runs, and the demo world must
   * appear in that database.
   */
  async function demoWorldOnceReachable(options: Parameters<typeof boot>[0], meanwhile: () => Promise<unknown>) {
    configure({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/aas" });
    process.env.SEED_DEMO = "true";
    try {
      await boot(options);
      expect(logged.some((l) => l.includes("start-up failed"))).toBe(true);
      const db = await newDatabase();
      try {
        configure({ DATABASE_URL: db.url });
        process.env.SEED_DEMO = "true";
        await meanwhile();
        const demoPeople = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from users where email = 'ava@example.com'`.catch(() => [{ n: 0 }]))[0]!.n;
        await vi.waitFor(async () => expect(await demoPeople()).toBe(1), { timeout: 60_000, interval: 250 });
        expect(exits).toEqual([]);
      } finally {
        stopBoot();
        await closeDb();
        await db.drop();
      }
    } finally {
      delete process.env.SEED_DEMO;
    }
  }

  it("a server reachable only later: boot's own retry opens it, then seeds the demo world and starts housekeeping", async () => {
    // Nothing else opens the database.
    await demoWorldOnceReachable({}, async () => {});
  }, 90_000);

  it("a database a request opens before boot's next attempt: the demo world is seeded at once, not at that attempt", async () => {
    // boot's own next attempt would come in 10 minutes: only the open can start the seeding.
    await demoWorldOnceReachable({ retryFirstMs: 600_000 }, () => getDb());
  }, 90_000);

  it("stopBoot during an attempt: the attempt does nothing more once it returns (no failure logged, no retry)", async () => {
    configure({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/aas" });
    const started = boot();
    stopBoot();
    await started;
    expect(logged.filter((l) => l.includes("start-up failed"))).toEqual([]);
  });

  it("a migration that fails: exit 1 naming the migration, the server's message and code; nothing applied", async () => {
    const db = await newDatabase();
    try {
      await db.sql`create table console_sessions (id text primary key)`;
      configure({ DATABASE_URL: db.url });
      await boot();
      expect(exits).toEqual([1]);
      expect(printed).toHaveLength(1);
      expect(printed[0]).toContain("Migration drizzle/0014_console_sessions.sql failed on the database at DATABASE_URL");
      expect(printed[0]).toContain('CREATE TABLE \\"console_sessions\\"');
      expect(printed[0]).toMatch(/relation "console_sessions" already exists \(42P07\)/);
      expect(printed[0]).not.toContain("not-shown");
      // One transaction: the migrations before 0014 were rolled back with it.
      expect(await db.sql`select to_regclass('public.users')::text as t`).toEqual([{ t: null }]);
      expect(await db.sql`select count(*)::int as n from drizzle.__drizzle_migrations`).toEqual([{ n: 0 }]);
    } finally {
      await db.drop();
    }
  });

  it("a database a newer release migrated: exit 1, this release must not write to it", async () => {
    const db = await newDatabase();
    try {
      const handle = await openDatabase({ url: db.url, max: 1 });
      await handle.close();
      await db.sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('newer', ${journal.at(-1)!.when + 60_000})`;
      configure({ DATABASE_URL: db.url });
      await boot();
      expect(exits).toEqual([1]);
      expect(printed[0]).toMatch(/^The database at DATABASE_URL \(.*:\*\*\*\*@.*\) was migrated by a newer release of this service .*this release must not write to it/);

      // More migrations recorded than this release has, whatever their dates.
      await db.sql`update drizzle.__drizzle_migrations set created_at = 1 where hash = 'newer'`;
      setDbHandleForTests(undefined);
      await boot();
      expect(exits).toEqual([1, 1]);
      expect(printed[1]).toContain(`records ${journal.length + 1} migrations`);
    } finally {
      await db.drop();
    }
  });
});

describe.skipIf(!BASE)("migrations on PostgreSQL wait a bounded time for a table's lock", () => {
  it("a migration whose table another session holds fails within lock_timeout, saying so, instead of queuing readers behind it", async () => {
    const db = await newDatabase();
    const holder = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      await (await openDatabase({ url: db.url, max: 1 })).close();
      // 0023 pending again: it ALTERs "upload_files".
      const last = journal.at(-1)!;
      expect(last.tag).toBe("0023_upload_file_chunk_default");
      await db.sql`alter table upload_files alter column chunk drop default`;
      await db.sql`delete from drizzle.__drizzle_migrations where created_at = ${last.when}`;
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      let holding = () => {};
      const holds = new Promise<void>((r) => (holding = r));
      const tx = holder.begin(async (t) => {
        await t`select count(*) from upload_files`;
        holding();
        await held;
      });
      await holds;
      const started = Date.now();
      const opening = openDatabase({ url: db.url, max: 1, migrationLockTimeoutMs: 500 });
      await expect(opening).rejects.toThrow(/Migration drizzle\/0023_upload_file_chunk_default\.sql failed .*\(55P03\)\. .*another session holds a lock on the table/);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await db.sql`select count(*)::int as n from drizzle.__drizzle_migrations where created_at = ${last.when}`).toEqual([{ n: 0 }]);
      release();
      await tx;
      await (await openDatabase({ url: db.url, max: 1, migrationLockTimeoutMs: 500 })).close();
      expect(await db.sql`select count(*)::int as n from drizzle.__drizzle_migrations where created_at = ${last.when}`).toEqual([{ n: 1 }]);
    } finally {
      await holder.end();
      await db.drop();
    }
  });

  it("instances starting together still take turns: the advisory lock is waited for beyond lock_timeout", async () => {
    const db = await newDatabase();
    const holder = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const conn = await holder.reserve();
      await conn`select pg_advisory_lock(7411)`;
      const opening = openDatabase({ url: db.url, max: 1, migrationLockTimeoutMs: 200 });
      await new Promise((r) => setTimeout(r, 1_000));
      await conn`select pg_advisory_unlock(7411)`;
      conn.release();
      await (await opening).close();
    } finally {
      await holder.end();
      await db.drop();
    }
  });
});

describe("start on the embedded database: what waiting cannot fix stops the service", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "aas-boot-"));
  });
  afterEach(() => {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  });

  it("another process has the embedded database open: exit 1 naming it, at start and at whichever later attempt first meets it", async () => {
    // This process's parent stands for a live service holding DATA_DIR.
    const stat = readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    writeFileSync(path.join(dir, "pglite.lock"), `${process.ppid} ${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}\n`);
    configure({ DATA_DIR: dir });
    await boot();
    expect(exits).toEqual([1]);
    expect(printed).toEqual([expect.stringMatching(new RegExp(`^The embedded database in ${dir} is open in another process \\(pid ${process.ppid}\\)`))]);
    // A later attempt (a request's, a runner's) of a process whose first failed otherwise stops it too.
    exits = [];
    printed = [];
    await expect(getDb()).rejects.toThrow(/open in another process/);
    expect(exits).toEqual([1]);
    expect(printed).toHaveLength(1);
  });

  it("a DATA_DIR that is a file: exit 1, naming DATA_DIR's absolute path", async () => {
    const file = path.join(dir, "data");
    writeFileSync(file, "");
    configure({ DATA_DIR: path.relative(process.cwd(), file) });
    await boot();
    expect(exits).toEqual([1]);
    expect(printed).toEqual([expect.stringMatching(new RegExp(`^DATA_DIR \\(${file}\\) cannot be made a directory, because a part of that path is a file: ENOTDIR`))]);
  });

  it("a DATA_DIR this process cannot write: exit 1, naming it", () => {
    const data = path.join(dir, "data");
    mkdirSync(path.join(data, "pglite"), { recursive: true });
    chmodSync(data, 0o555);
    chmodSync(path.join(data, "pglite"), 0o555);
    chmodSync(dir, 0o755);
    // As root every directory is writable: the service is started as nobody, as in a container.
    const asNobody = process.getuid?.() === 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    const child = [
      `import { boot } from ${JSON.stringify(path.join(ROOT, "lib/boot.ts"))};`,
      "await boot();",
      'setTimeout(() => { console.log("still running"); process.exit(0); }, 2000);',
    ].join("\n");
    const script = path.join(dir, "child.mts");
    writeFileSync(script, child);
    const cmd = [...asNobody, path.join(ROOT, "node_modules/.bin/tsx"), "--conditions=react-server", script];
    const run = spawnSync(cmd[0]!, cmd.slice(1), {
      cwd: ROOT,
      env: { ...withoutDatabaseUrl(process.env), DATA_DIR: data, LOG_LEVEL: "info", AUTH_SECRET: "a".repeat(32), SECRETS_KEY: "b".repeat(32) },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stdout).not.toContain("still running");
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toMatch(new RegExp(`^DATA_DIR \\(${data}\\) cannot be written by this process \\(uid \\d+\\): EACCES`));
  });

  it("a migration that fails: exit 1 naming the migration and PostgreSQL's message", async () => {
    const { PGlite } = await import("@electric-sql/pglite");
    const pg = new PGlite(path.join(dir, "pglite"));
    await pg.exec("create table console_sessions (id text primary key)");
    await pg.close();
    configure({ DATA_DIR: dir });
    await boot();
    expect(exits).toEqual([1]);
    expect(printed[0]).toContain(`Migration drizzle/0014_console_sessions.sql failed on the embedded database in DATA_DIR (${dir})`);
    expect(printed[0]).toMatch(/relation "console_sessions" already exists \(42P07\)/);
  });

  it("a SECRETS_KEY that cannot open the secrets it holds sealed: exit 1, naming SECRETS_KEY; the key they were sealed with starts", async () => {
    process.env.SECRETS_KEY = "the-first-instance-key";
    const first = await openDatabase({ dataDir: dir });
    resetKeyCacheForTests();
    await signingKey(first.db);
    await first.close();
    resetKeyCacheForTests();
    configure({ DATA_DIR: dir });
    process.env.SECRETS_KEY = "another-instance-key";
    await boot();
    expect(exits).toEqual([1]);
    expect(printed).toEqual([expect.stringMatching(/^SECRETS_KEY cannot open the token signing key this database holds sealed: it is not the key they were sealed with\./)]);

    process.env.SECRETS_KEY = "the-first-instance-key";
    exits = [];
    printed = [];
    await boot();
    expect(exits).toEqual([]);
    expect(printed).toEqual([]);
    await expect(getDb()).resolves.toBeDefined();
  });

  it("a database a newer release migrated: exit 1, this release must not write to it", async () => {
    await (await openDatabase({ dataDir: dir })).close();
    const { PGlite } = await import("@electric-sql/pglite");
    const pg = new PGlite(path.join(dir, "pglite"));
    await pg.query("insert into drizzle.__drizzle_migrations (hash, created_at) values ('newer', $1)", [journal.at(-1)!.when + 60_000]);
    const before = rowsOf<{ n: number }>(await pg.query("select count(*)::int as n from drizzle.__drizzle_migrations"))[0]!.n;
    await pg.close();
    configure({ DATA_DIR: dir });
    await boot();
    expect(exits).toEqual([1]);
    expect(printed[0]).toMatch(new RegExp(`^The embedded database in DATA_DIR \\(${dir}\\) was migrated by a newer release of this service \\(it records ${before} migrations`));
    expect(printed[0]).toContain(`this release knows ${journal.length}, up to ${journal.at(-1)!.tag}), and this release must not write to it`);
  });
});
