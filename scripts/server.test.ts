import { spawn, type ChildProcessByStdio } from "node:child_process";
import http from "node:http";
import net from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const serverScript = fileURLToPath(new URL("./server.mjs", import.meta.url));

/**
 * An app directory whose `next` stands in for Next.js (a real one needs a build of the app):
 * what matters here is what Next.js's router server does with an uncaught exception, which it
 * logs to stderr and goes on (next/dist/server/lib/router-server.js). Its handler writes a log
 * line for each request, as the service's request logs do.
 */
function appWithNext(dir: string) {
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "app", private: true }));
  const next = path.join(dir, "node_modules", "next");
  mkdirSync(next, { recursive: true });
  writeFileSync(path.join(next, "package.json"), JSON.stringify({ name: "next", main: "index.js" }));
  // `/slow` answers after a second; the app registers a shutdown, as instrumentation-node.ts does.
  writeFileSync(
    path.join(next, "index.js"),
    `module.exports = () => ({
      prepare: async () => {
        console.log("app prepared");
        process.on("uncaughtException", (err) => console.error("uncaughtException: ", err));
        globalThis[Symbol.for("athlete-activity-service.shutdown")] = async () => console.log("app shut down");
      },
      getRequestHandler: () => (req, res) => {
        console.error("GET", req.url);
        if (req.url === "/slow") setTimeout(() => res.end("slow ok"), 1000);
        else if (req.url === "/host") res.end(String(process.env.HOST));
        else if (req.url === "/quick") setImmediate(() => res.end("quick ok"));
        else res.end("ok");
      },
    });`,
  );
}

/** Starts scripts/server.mjs over the stand-in app; resolves with its port once it is ready. */
async function startServer(dir: string, { args = ["-H", "127.0.0.1"], env = {} as Record<string, string | undefined> } = {}) {
  const proc = spawn(process.execPath, [serverScript, dir, "-p", "0", ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
  const output = { out: "", err: "" };
  proc.stderr.on("data", (chunk: Buffer) => (output.err += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout.on("data", (chunk: Buffer) => {
      output.out += chunk.toString();
      const m = /Ready on port (\d+)/.exec(output.out);
      if (m) resolve(Number(m[1]));
    });
    void exited.then((e) => reject(new Error(`the server exited before it was ready (${JSON.stringify(e)}): ${output.out}`)));
  });
  return { proc, port, exited, output };
}

describe("one server process (scripts/server.mjs)", () => {
  let dir: string | undefined;
  let child: ChildProcessByStdio<null, Readable, Readable> | undefined;
  afterEach(() => {
    child?.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("stops with a failure when nobody reads its output any more, instead of spinning on its own error log", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "aas-server-"));
    appWithNext(dir);
    const proc = spawn(process.execPath, [serverScript, dir, "-p", "0", "-H", "127.0.0.1"], { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once("exit", (code, signal) => resolve({ code, signal })),
    );
    let out = "";
    const port = await new Promise<number>((resolve, reject) => {
      proc.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const m = /Ready on port (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      void exited.then((e) => reject(new Error(`the server exited before it was ready (${JSON.stringify(e)}): ${out}`)));
    });
    // It serves while its output is read.
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("ok");

    // Whoever read its output goes away; the next request makes it write a log line.
    proc.stdout.destroy();
    proc.stderr.destroy();
    await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);

    // Before, the failed write became an uncaught exception, whose log line failed the same
    // way, for ever: the process never exited and this wait ran into the test's timeout.
    expect(await exited).toEqual({ code: 1, signal: null });
  }, 20_000);

  it("listens on loopback only when its own address (BASE_URL) is a loopback one, and on every interface otherwise", async () => {
    // A demo on this machine may send webhooks to private networks (lib/env.ts): nobody else may reach it.
    const lan = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    const reachable = (host: string, port: number) =>
      fetch(`http://${host}:${port}/`).then(
        () => true,
        () => false,
      );
    // What it listens on is told to the app as HOST (lib/env.ts's private-network default reads it), `-H` too.
    for (const [baseUrl, args, only, host] of [
      ["http://localhost:3000", [], true, "127.0.0.1"],
      ["https://training.example.com", [], false, "undefined"],
      ["http://localhost:3000", ["-H", "0.0.0.0"], false, "0.0.0.0"],
    ] as const) {
      dir = mkdtempSync(path.join(os.tmpdir(), "aas-server-"));
      appWithNext(dir);
      const { proc, port, output, exited } = await startServer(dir, { args: [...args], env: { BASE_URL: baseUrl, HOST: undefined } });
      child = proc;
      expect({ baseUrl, ready: output.out.includes("(127.0.0.1 only)") }).toEqual({ baseUrl, ready: only });
      expect(await reachable("127.0.0.1", port)).toBe(true);
      expect({ baseUrl, args, host: await (await fetch(`http://127.0.0.1:${port}/host`)).text() }).toEqual({ baseUrl, args, host });
      if (lan) expect({ baseUrl, lan: await reachable(lan, port) }).toEqual({ baseUrl, lan: !only });
      proc.kill("SIGTERM");
      await exited;
      child = undefined;
    }
  }, 30_000);

  it("on a port in use it exits 1 with the reason and never prepares the app (whose runners and database a first start holds)", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "aas-server-"));
    appWithNext(dir);
    const first = await startServer(dir);
    child = first.proc;
    const second = spawn(process.execPath, [serverScript, dir, "-p", String(first.port), "-H", "127.0.0.1"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    second.stdout.on("data", (c: Buffer) => (out += c.toString()));
    second.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const exit = await new Promise<number | null>((resolve) => second.once("exit", (code) => resolve(code)));
    expect(exit).toBe(1);
    expect(err).toContain(`Cannot listen on port ${first.port} of 127.0.0.1: it is in use`);
    expect(out).not.toContain("app prepared");
    // The first goes on serving.
    expect(await (await fetch(`http://127.0.0.1:${first.port}/`)).text()).toBe("ok");
  }, 20_000);

  it("stops gracefully on SIGTERM: a request in flight is answered, then the app shuts down, then it exits 0", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "aas-server-"));
    appWithNext(dir);
    const { proc, port, exited, output } = await startServer(dir);
    child = proc;
    const slow = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.text());
    // Once the request is being answered, the stop comes.
    for (let i = 0; !output.err.includes("GET /slow"); i++) {
      if (i > 500) throw new Error("the request never arrived");
      await new Promise((r) => setTimeout(r, 10));
    }
    proc.kill("SIGTERM");
    expect(await slow).toBe("slow ok");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(output.out).toContain("app shut down");
  }, 20_000);

  it("stops without resetting a request a keep-alive client sent meanwhile: each is answered (Connection: close from then on), or its connection was never accepted", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "aas-server-"));
    appWithNext(dir);
    const { proc, port, exited } = await startServer(dir);
    child = proc;
    let stopped = false;
    void exited.then(() => (stopped = true));
    const outcomes = { answered: 0, afterStop: 0, refused: 0, told: 0 };
    const failures: string[] = [];
    /** One client on one kept-alive connection at a time (a node:http Agent, which drops a connection told `Connection: close`), sending its next request as soon as the last is answered. */
    const client = async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        while (!stopped) {
          const outcome = await new Promise<"answered" | "refused" | Error>((resolve) => {
            const req = http.get({ host: "127.0.0.1", port, path: "/quick", agent }, (res) => {
              if (res.headers.connection === "close") outcomes.told++;
              res.resume();
              res.on("end", () => resolve("answered"));
              res.on("error", resolve);
            });
            // A new connection the stopped server never accepted: the client knows nothing was sent.
            req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED" ? "refused" : err));
          });
          if (outcome === "refused") {
            outcomes.refused++;
            break;
          }
          if (outcome instanceof Error) failures.push(`${(outcome as NodeJS.ErrnoException).code ?? ""} ${outcome.message}`);
          else {
            outcomes.answered++;
            if (stopping) outcomes.afterStop++;
          }
        }
      } finally {
        agent.destroy();
      }
    };
    let stopping = false;
    const clients = Array.from({ length: 8 }, client);
    // Under load, the stop comes.
    while (outcomes.answered < 400) await new Promise((r) => setTimeout(r, 5));
    stopping = true;
    proc.kill("SIGTERM");
    await Promise.all(clients);
    // Before, the stop closed kept-alive connections it thought idle every 100 ms, while their
    // clients' next requests were on the way: ECONNRESET, "socket hang up".
    expect(failures).toEqual([]);
    expect(outcomes.told).toBeGreaterThan(0);
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 30_000);

  it("leaves a connection kept alive from before the stop to its client, and answers a request on it after the app has shut down with a 503 that closes it", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "aas-server-"));
    appWithNext(dir);
    const { proc, port, exited, output } = await startServer(dir);
    child = proc;
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    const ended = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
    socket.on("error", (err) => (received += `\n[${err.message}]`));
    const request = "GET /v1/athletes/me HTTP/1.1\r\nHost: localhost\r\n\r\n";
    socket.write(request);
    for (let i = 0; !received.includes("\r\n\r\nok"); i++) {
      if (i > 500) throw new Error(`no first answer: ${received}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(received).not.toMatch(/connection: close/i);
    proc.kill("SIGTERM");
    for (let i = 0; !output.out.includes("app shut down"); i++) {
      if (i > 500) throw new Error("the app never shut down");
      await new Promise((r) => setTimeout(r, 10));
    }
    received = "";
    socket.write(request);
    // Before, the stop closed the idle connection at once: the request met a closed socket.
    const answer = await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(answer).toContain('"code":"service_unavailable"');
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 20_000);
});
