import { afterEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "@/lib/env";
import { GET, POST } from "@/app/api/inngest/route";
import { setupApi } from "@/lib/testing/fixtures";
import { functions } from "./index";

// Vitest sets BASE_URL to "/" (Vite's base path); the service reads it as its public address.
process.env.BASE_URL = "http://localhost:3000";
const api = setupApi();
const saved = {
  DELIVERY_RUNNER: process.env.DELIVERY_RUNNER,
  INNGEST_DEV: process.env.INNGEST_DEV,
  INNGEST_SIGNING_KEY: process.env.INNGEST_SIGNING_KEY,
  INNGEST_EVENT_KEY: process.env.INNGEST_EVENT_KEY,
};
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
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
    expect(body).toMatchObject({ function_count: 4, mode: "dev" });
    expect(functions.map((f) => f.id())).toEqual(["fan-out-events", "deliver-webhook", "hand-out-waiting", "process-upload"]);
  });

  it("is not served in dev mode beside Inngest's keys: dev mode would run a function's step for anyone's unsigned call", async () => {
    await api.db();
    process.env.DELIVERY_RUNNER = "inngest";
    process.env.INNGEST_DEV = "1";
    process.env.INNGEST_SIGNING_KEY = "signkey-prod-0123456789abcdef0123456789abcdef";
    process.env.INNGEST_EVENT_KEY = "evtkey";
    resetEnvForTests();
    // An unsigned call that asks for fan-out-events' first step (its id hashed as the SDK does).
    const event = { name: "aas/outbox.appended", data: {}, ts: Date.now() };
    const call = new Request("http://localhost:3000/api/inngest?fnId=athlete-activity-service-fan-out-events&stepId=976e3e12b4232a002c2545567f8476b8a345c945", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ event, events: [event], steps: {}, ctx: { run_id: "01J00000000000000000000000", attempt: 0, stack: { stack: [], current: 0 }, disable_immediate_execution: true }, version: 2 }),
    });
    // The settings are refused (the service does not start on them), so nothing runs.
    await expect(async () => POST(call, {})).rejects.toThrow(/INNGEST_DEV: dev mode accepts unsigned calls/);
  });
});
