import { afterEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "@/lib/env";
import { GET } from "@/app/api/inngest/route";
import { functions } from "./index";

// Vitest sets BASE_URL to "/" (Vite's base path); the service reads it as its public address.
process.env.BASE_URL = "http://localhost:3000";
const saved = { runner: process.env.DELIVERY_RUNNER, dev: process.env.INNGEST_DEV };
afterEach(() => {
  for (const [k, v] of [["DELIVERY_RUNNER", saved.runner], ["INNGEST_DEV", saved.dev]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvForTests();
});

describe("/api/inngest", () => {
  it("is not served with the local runner", async () => {
    process.env.DELIVERY_RUNNER = "local";
    resetEnvForTests();
    expect((await GET(new Request("http://localhost:3000/api/inngest"), {})).status).toBe(404);
  });

  it("serves every function when DELIVERY_RUNNER=inngest", async () => {
    process.env.DELIVERY_RUNNER = "inngest";
    process.env.INNGEST_DEV = "1";
    resetEnvForTests();
    const res = await GET(new Request("http://localhost:3000/api/inngest"), {});
    expect(res.status).toBe(200);
    const body = (await res.json()) as { function_count: number; mode: string };
    expect(body).toMatchObject({ function_count: 3, mode: "dev" });
    expect(functions.map((f) => f.id())).toEqual(["fan-out-events", "deliver-webhook", "process-upload"]);
  });
});
