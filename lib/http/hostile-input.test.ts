import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { setupApi } from "../testing/fixtures";
import { hostileRequest, judge, reproduction, serialize, type HostileContext, type HostileRequest } from "../testing/hostile-requests";
import { sendRaw } from "../testing/raw-http";
import { webhookRows } from "../testing/webhook-rows";

const api = setupApi();

/**
 * Generated hostile requests (bad JSON, wrong types, impossible dates, unknown enums, huge and
 * malformed headers, bad UTF-8, oversize and truncated bodies) over the /v1 and OAuth routes:
 * none is answered with a 5xx, and every 4xx is a problem document with a code of
 * CONTRACT §3, or RFC 6749's error shape on /oauth/token and /oauth/revoke. The fault scenario
 * (`npm run bench -- faults`) sends 10,000 of them to the production build, console included.
 */
describe("hostile requests", () => {
  let ctx: HostileContext;
  let port: number;

  beforeAll(async () => {
    const me = await api.person();
    const other = await api.person();
    const pat = await api.pat(me.id);
    const teamId = await api.team(me.id, [other.id]);
    const created = await api.call(pat, "POST", "/v1/athletes/me/activities", {
      body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 },
    });
    const activityId = ((await created.json()) as { id: string }).id;
    const app = await api.app({ name: "Hostile" });
    const client = { id: app.clientId, secret: app.secret };
    const rows = webhookRows(api.db);
    const hook = await rows.subscribe(client.id, "https://127.0.0.1/hook");
    const spare = await rows.subscribe(client.id, "https://127.0.0.1/spare");
    const url = new URL(api.url);
    port = Number(url.port);
    ctx = {
      host: url.host,
      athleteId: me.id,
      otherAthleteId: other.id,
      activityId,
      teamId,
      webhookId: hook.id,
      spareWebhookId: spare.id,
      deliveryId: "whd_0000000000000000000000",
      consoleTokenId: "pat_0000000000000000000000",
      consoleClientId: client.id,
      consoleWebhookId: hook.id,
      consoleGrantId: "grt_0000000000000000000000",
      pat,
      appToken: app.token,
      client,
      publicClientId: "demo-mobile",
    };
  });

  /** What the test server (lib/testing/server.ts) cannot route as Next.js does; the bench covers it. */
  const routable = (r: HostileRequest) => {
    if (!["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD"].includes(r.method)) return false;
    // Methods a route file does not export are Next.js's own 405 (the bench reports those).
    if (r.family === "oauth" && r.method !== "POST") return false;
    try {
      decodeURIComponent(r.target.split("?")[0]!);
      // Dot segments can lead out of the family: /v1/%2e%2e/oauth/token is /oauth/token.
      return new URL(r.target, "http://x").pathname.startsWith(r.family === "v1" ? "/v1" : r.family === "mcp" ? "/mcp" : "/oauth");
    } catch {
      return false;
    }
  };

  it("answers every one without a 5xx, and every 4xx in its family's error shape", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileRequest(ctx, ["v1", "mcp", "oauth"]).filter(routable),
        async (r) => {
          const answer = await sendRaw(port, serialize(r, ctx.host), { halfClose: r.truncatedTransport });
          const verdict = judge(r, answer);
          expect(verdict, `${r.method} ${r.target.slice(0, 120)} (${r.notes.join("; ")}): ${reproduction(r, ctx.host)}`).toMatchObject({ ok: true });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("answers every JSON-RPC message to /mcp (broken tool arguments, unknown tools, batches, nonsense) without a 5xx", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest(ctx, ["mcp"]).filter(routable), async (r) => {
        const answer = await sendRaw(port, serialize(r, ctx.host), { halfClose: r.truncatedTransport });
        const verdict = judge(r, answer);
        expect(verdict, `${r.method} ${r.target.slice(0, 120)} (${r.notes.join("; ")}): ${reproduction(r, ctx.host)}`).toMatchObject({ ok: true });
      }),
      { numRuns: 80 },
    );
  });
});
