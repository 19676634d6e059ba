import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { databaseIsLocal, ensureGeneratedSecrets, workerPlan } from "./serve.mjs";

const cores = os.availableParallelism();

describe("npm start's worker plan", () => {
  it("runs one process on the embedded database, which only one process can open", () => {
    expect(workerPlan({}).workers).toBe(1);
    expect(() => workerPlan({ WEB_CONCURRENCY: "2" })).toThrow(/DATABASE_URL/);
  });

  it("leaves a core to a PostgreSQL server on this machine, and uses every core for a remote one", () => {
    expect(workerPlan({ DATABASE_URL: "postgres://db.internal:5432/aas" }).workers).toBe(cores);
    for (const url of ["postgres://postgres@127.0.0.1:5432/test", "postgres://localhost/aas", "postgres://[::1]/aas", "postgres:///aas?host=/var/run/postgresql", "postgres://postgres@%2Fvar%2Frun%2Fpostgresql/aas", "postgres://postgres@/aas?host=/var/run/postgresql", "postgresql://u:p@/aas"]) {
      expect(databaseIsLocal(url), url).toBe(true);
      expect(workerPlan({ DATABASE_URL: url }).workers).toBe(Math.max(1, cores - 1));
    }
    expect(databaseIsLocal("postgres://10.0.0.5/aas")).toBe(false);
    expect(databaseIsLocal("not a url")).toBe(false);
  });

  it("takes WEB_CONCURRENCY over the plan, and refuses a count that is not a positive whole number", () => {
    expect(workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "3" }).workers).toBe(3);
    expect(() => workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "0" })).toThrow(/positive/);
    expect(() => workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "two" })).toThrow(/positive/);
    // Plain decimal digits only, as the README says of every number.
    for (const bad of ["0x2", "1e0", " 2 ", "2.0", "+2", "0b10"]) {
      expect(() => workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: bad }), bad).toThrow(/WEB_CONCURRENCY must be a positive whole number in decimal digits/);
    }
    expect(workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "02" }).workers).toBe(2);
  });
});

describe("secrets generated before the workers start", () => {
  const dataDir = () => mkdtempSync(path.join(os.tmpdir(), "aas-serve-"));
  const read = (dir: string) => JSON.parse(readFileSync(path.join(dir, "secrets.json"), "utf8")) as Record<string, string>;

  it("writes AUTH_SECRET and SECRETS_KEY once, so every worker signs with the same keys", () => {
    const dir = dataDir();
    ensureGeneratedSecrets({ DATA_DIR: dir });
    const first = read(dir);
    expect(first.AUTH_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.SECRETS_KEY).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.AUTH_SECRET).not.toBe(first.SECRETS_KEY);
    ensureGeneratedSecrets({ DATA_DIR: dir });
    expect(read(dir)).toEqual(first);
    expect(statSync(path.join(dir, "secrets.json")).mode & 0o077).toBe(0);
  });

  it("generates only what neither the environment nor the file holds, and keeps what the file has", () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "secrets.json"), JSON.stringify({ AUTH_SECRET: "kept", OTHER: "x" }));
    ensureGeneratedSecrets({ DATA_DIR: dir, SECRETS_KEY: "from-env" });
    expect(read(dir)).toEqual({ AUTH_SECRET: "kept", OTHER: "x" });
    ensureGeneratedSecrets({ DATA_DIR: dir });
    expect(read(dir)).toMatchObject({ AUTH_SECRET: "kept", OTHER: "x", SECRETS_KEY: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
  });

  it("refuses a secrets file it cannot read rather than replacing the keys in it", () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "secrets.json"), "{not json");
    expect(() => ensureGeneratedSecrets({ DATA_DIR: dir })).toThrow(/not readable JSON/);
    expect(readFileSync(path.join(dir, "secrets.json"), "utf8")).toBe("{not json");
  });
});

describe("the launcher's server processes", () => {
  const serveScript = fileURLToPath(new URL("./serve.mjs", import.meta.url));
  const dirs: string[] = [];
  const procs: ReturnType<typeof spawn>[] = [];
  const servers: number[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.kill("SIGKILL");
    for (const pid of servers.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /**
   * An app whose `next` stands in for Next.js and answers with where the app would keep its data
   * (lib/env.ts's DATA_DIR, resolved as lib/db/client.ts and lib/secrets.ts resolve it).
   * `onPrepare` is code run as the app is prepared (a shutdown registered, as instrumentation-node.ts does).
   */
  function standInApp(dir: string, onPrepare = "") {
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "app", private: true }));
    const next = path.join(dir, "node_modules", "next");
    mkdirSync(next, { recursive: true });
    writeFileSync(path.join(next, "package.json"), JSON.stringify({ name: "next", main: "index.js" }));
    writeFileSync(
      path.join(next, "index.js"),
      `const path = require("node:path");
      module.exports = () => ({
        prepare: async () => { ${onPrepare} },
        getRequestHandler: () => (req, res) => res.end(path.resolve(process.env.DATA_DIR || "./.data")),
      });`,
    );
  }

  /** Runs `node scripts/serve.mjs <app>` in `cwd`; resolves once it is ready. */
  async function launch(app: string, cwd: string, env: Record<string, string | undefined>) {
    const proc = spawn(process.execPath, [serveScript, app, "-p", "0", "-H", "127.0.0.1"], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    procs.push(proc);
    const output = { out: "" };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    const port = await new Promise<number>((resolve, reject) => {
      proc.stdout.on("data", (chunk: Buffer) => {
        output.out += chunk.toString();
        const m = /Ready on port (\d+)/.exec(output.out);
        if (m) resolve(Number(m[1]));
      });
      void exited.then((e) => reject(new Error(`the launcher exited (${JSON.stringify(e)}): ${output.out}`)));
    });
    return { proc, port, output, exited };
  }

  /** Runs `node scripts/serve.mjs <app>` in `cwd`; resolves with the data directory its server processes use. */
  async function dataDirOfServers(app: string, cwd: string, env: Record<string, string | undefined>) {
    const { proc, port, exited, output } = await launch(app, cwd, env);
    // A cluster's launcher takes signals once every worker listens.
    for (let i = 0; env.WEB_CONCURRENCY !== "1" && !output.out.includes("workers listening"); i++) {
      if (i > 500) throw new Error(`the workers never all listened: ${output.out}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const seen = new Set<string>();
    // With several workers, enough requests to meet each (new connections, spread among them).
    for (let i = 0; i < 8; i++) seen.add(await (await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } })).text());
    // Stopped through the launcher, which passes the signal on to its server processes.
    proc.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    return [...seen];
  }

  it("is a relative DATA_DIR resolved against the directory the launcher was started in, in one process and in a cluster", async () => {
    const app = mkdtempSync(path.join(os.tmpdir(), "aas-serve-app-"));
    const from = mkdtempSync(path.join(os.tmpdir(), "aas-serve-cwd-"));
    dirs.push(app, from);
    standInApp(app);
    for (const workers of ["1", "2"]) {
      // Before, the server processes (run in the app's directory) took it as <app>/rel-data.
      expect({ workers, dirs: await dataDirOfServers(app, from, { DATA_DIR: "rel-data", WEB_CONCURRENCY: workers }) }).toEqual({ workers, dirs: [path.join(from, "rel-data")] });
    }
    // Unset: the app's own .data, wherever the launcher runs (a service manager may start it in /).
    expect(await dataDirOfServers(app, from, { DATA_DIR: undefined, WEB_CONCURRENCY: "1" })).toEqual([path.join(app, ".data")]);
  }, 30_000);

  it("stops within its bound with one server process too, killing a server that does not stop (as the cluster's launcher does)", async () => {
    const app = mkdtempSync(path.join(os.tmpdir(), "aas-serve-app-"));
    dirs.push(app);
    // A shutdown that never returns the thread: the server's own timer cannot end it either.
    standInApp(app, `console.log("server pid " + process.pid); globalThis[Symbol.for("athlete-activity-service.shutdown")] = async () => { for (;;); };`);
    const { proc, output, exited } = await launch(app, app, { WEB_CONCURRENCY: "1" });
    const server = Number(/server pid (\d+)/.exec(output.out)?.[1]);
    const alive = () => {
      try {
        process.kill(server, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    servers.push(server);
    const started = Date.now();
    proc.kill("SIGTERM");
    // Before, the launcher waited on its server for ever (this wait ran into the test's timeout).
    expect(await exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    expect(Date.now() - started).toBeLessThan(12_000);
    for (let i = 0; alive() && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive()).toBe(false);
  }, 20_000);
});

