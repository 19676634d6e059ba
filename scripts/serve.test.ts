import os from "node:os";
import { describe, expect, it } from "vitest";
import { databaseIsLocal, serverNodeOptions, workerPlan } from "./serve.mjs";

const cores = os.availableParallelism();

describe("npm start's worker plan", () => {
  it("runs one process on the embedded database, which only one process can open", () => {
    expect(workerPlan({}).workers).toBe(1);
    expect(() => workerPlan({ WEB_CONCURRENCY: "2" })).toThrow(/DATABASE_URL/);
  });

  it("leaves a core to a PostgreSQL server on this machine, and uses every core for a remote one", () => {
    expect(workerPlan({ DATABASE_URL: "postgres://db.internal:5432/aas" }).workers).toBe(cores);
    for (const url of ["postgres://postgres@127.0.0.1:5432/test", "postgres://localhost/aas", "postgres://[::1]/aas", "postgres:///aas?host=/var/run/postgresql"]) {
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
  });
});

describe("the Node options of every server process", () => {
  it("preloads the request-signal module and widens the old generation's growth, unless NODE_OPTIONS sets it", () => {
    const options = serverNodeOptions({});
    expect(options[0]).toBe("--import");
    expect(options[1]).toMatch(/^file:\/\/.*\/scripts\/request-signal\.mjs$/);
    expect(options).toContain("--heap-growing-percent=800");
    for (const NODE_OPTIONS of ["--heap-growing-percent=0", "--max-old-space-size=512 --heap_growing_percent=200"]) {
      expect(serverNodeOptions({ NODE_OPTIONS }).some((o) => o.startsWith("--heap-growing-percent")), NODE_OPTIONS).toBe(false);
    }
  });
});
