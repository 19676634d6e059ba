import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { resetEnvForTests } from "../../env";
import { setupApi } from "../../testing/fixtures";

const api = setupApi();

beforeAll(() => {
  process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
  resetEnvForTests();
});
afterAll(() => {
  delete process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
  resetEnvForTests();
});

describe("the subscribe handshake holds no transaction", () => {
  it("lets other requests, writes included, complete while an endpoint is still answering the handshake", async () => {
    // The receiver answers the handshake only when the test says so.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const handshakeArrived = new Promise<void>((r) => (reached = r));
    const receiver = http.createServer(async (req, res) => {
      const challenge = new URL(req.url!, "http://x").searchParams.get("hub.challenge");
      reached();
      await released;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ "hub.challenge": challenge }));
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const { token: access_token } = await api.app({ name: "Slow Hooks" });

    const subscribing = api.call(access_token, "POST", "/v1/app/webhooks", { body: { url, events: ["activity.created"] } });
    await handshakeArrived;
    // If the handshake ran inside the write's transaction, the embedded database (one
    // connection) could serve nothing else until the endpoint answered: this would never finish.
    const athlete = await api.person();
    const meanwhile = await api.call(await api.pat(athlete.id), "POST", "/v1/athletes/me/activities", {
      body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:00:00", elapsed_time_s: 1800 },
    });
    expect(meanwhile.status).toBe(201);
    release();
    expect((await subscribing).status).toBe(201);
    receiver.close();
  });
});
