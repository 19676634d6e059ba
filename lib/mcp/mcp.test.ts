import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Ajv } from "ajv";
import type { Scope } from "../auth/scopes";
import type { Db } from "../db/client";
import { athleteProfiles, oauthClients, oauthGrants, oauthTokenFamilies, teamMemberships, teams, users } from "../db/schema";
import { newId } from "../ids";
import { inWriteCtx } from "../http/operation";
import { issueAccessToken } from "../oauth/access-token";
import { disconnectApp } from "../oauth-grants/disconnect-app";
import { SAMPLES_DIR } from "../files/testing/samples";
import { awayFromWindowEdge } from "../testing/clock";
import { setupApi } from "../testing/fixtures";
import { startUploadProcessor, type UploadProcessor } from "../uploads/local-processor";
import { log } from "../log";
import { handleMcpRequest, withoutErrorData } from "./handler";
import { readFileSync } from "node:fs";
import path from "node:path";

// The MCP server over real HTTP with the SDK's own client: every tool's answer is held to its
// outputSchema and to what /v1 answers for the same data; scopes, reach, audience, 402 and
// rate limits as on /v1.

const api = setupApi();
let db: Db;
const clients: Client[] = [];
let processor: UploadProcessor;

beforeAll(async () => {
  db = await api.db();
  processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await processor.stop();
});

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: "test-assistant", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** An OAuth access token of a public app's grant, for `resource`. */
async function oauthToken(userId: string, scopes: Scope[], resource: "v1" | "mcp" = "mcp") {
  const clientId = `assistant-${newId("grt")}`;
  await db.insert(oauthClients).values({ clientId, name: "Assistant", kind: "public", redirectUris: ["http://127.0.0.1/callback"] });
  const grantId = newId("grt");
  await db.insert(oauthGrants).values({ id: grantId, clientId, userId, scopes });
  const familyId = newId("fam");
  await db.insert(oauthTokenFamilies).values({ id: familyId, grantId, scopes, resource });
  const { token } = await issueAccessToken(db, { subject: userId, clientId, scopes, grantId, familyId, resource });
  return { token, grantId };
}

async function post(token: string | null, body: unknown) {
  return fetch(`${api.url}/mcp`, {
    method: "POST",
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
}

/**
 * One message answered both ways a call is answered: over HTTP (the handler answers what it
 * can itself) and with every message left to the SDK's server (`direct: false`).
 */
async function bothWays(headers: Record<string, string>, body: string): Promise<Response[]> {
  return [
    await fetch(`${api.url}/mcp`, { method: "POST", headers, body }),
    await handleMcpRequest(new Request(`${api.url}/mcp`, { method: "POST", headers, body }), { direct: false }),
  ];
}

async function v1(token: string, p: string): Promise<unknown> {
  const res = await api.call(token, "GET", p);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

async function upload(pat: string, file: string): Promise<string> {
  const form = new FormData();
  form.set("file", new Blob([readFileSync(path.join(SAMPLES_DIR, file))]), path.basename(file));
  const res = await fetch(`${api.url}/v1/athletes/me/uploads`, { method: "POST", headers: { authorization: `Bearer ${pat}` }, body: form });
  expect(res.status, await res.clone().text()).toBe(202);
  const { id } = (await res.json()) as { id: string };
  processor.wake();
  await processor.idle();
  const got = (await (await fetch(`${api.url}/v1/uploads/${id}`, { headers: { authorization: `Bearer ${pat}` } })).json()) as { status: string; activity_id?: string };
  expect(got.status).toBe("succeeded");
  return got.activity_id!;
}

const ajv = new Ajv({ strict: false });

describe("the MCP server", () => {
  it("answers every tool in its outputSchema, with the same data as /v1", async () => {
    const coach = await api.person({ name: "Cora", timezone: "Europe/Oslo" });
    const athlete = await api.person({ name: "Ava" });
    const teamId = await api.team(coach.id, [athlete.id], { name: "Harriers" });
    const pat = await api.pat(athlete.id);
    for (const [i, start] of ["2026-10-05T07:00:00", "2026-10-07T07:00:00", "2026-10-14T18:30:00"].entries()) {
      const res = await api.call(pat, "POST", "/v1/athletes/me/activities", {
        body: { name: `Run ${i}`, sport_type: "run", start_local: start, elapsed_time_s: 3600, moving_time_s: 3500, distance_m: 10_000 + i, elevation_gain_m: 50 },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const ride = await upload(pat, "fit/garmin-edge-500-activity.fit");
    const metric = await api.call(pat, "POST", "/v1/athletes/me/metrics", { body: { type: "body_mass_kg", value: 70.5, measured_local: "2026-10-06T06:30:00" } });
    expect(metric.status).toBe(201);

    const client = await mcpClient(pat);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_activity", "get_activity_streams", "get_profile", "get_training_summary", "list_activities", "list_metrics", "list_team_athletes"]);
    const schemaOf = (name: string) => tools.find((t) => t.name === name)!.outputSchema!;
    for (const t of tools) expect(t.inputSchema.type).toBe("object");

    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const validate = ajv.compile(schemaOf(name));
      expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
      // The same as JSON text, for clients that read only text.
      expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
      return result.structuredContent;
    };

    expect(await call("get_profile", {})).toEqual(await v1(pat, "/v1/athletes/me"));
    expect(await call("list_activities", { limit: 2 })).toEqual(await v1(pat, "/v1/athletes/me/activities?limit=2"));
    expect(await call("list_activities", { start: "2026-10-06", end: "2026-10-15", sport_type: "run" })).toEqual(
      await v1(pat, "/v1/athletes/me/activities?start=2026-10-06&end=2026-10-15&sport_type=run"),
    );
    const withLaps = (await call("get_activity", { id: ride })) as { laps: unknown[] };
    const { laps, ...activity } = withLaps;
    expect(activity).toEqual(await v1(pat, `/v1/activities/${ride}`));
    expect(laps).toEqual(((await v1(pat, `/v1/activities/${ride}/laps`)) as { data: unknown[] }).data);
    expect(laps.length).toBeGreaterThan(0);
    expect(await call("get_activity_streams", { id: ride, keys: "time_s,heart_rate_hz,latlng", resolution: "medium" })).toEqual(
      await v1(pat, `/v1/activities/${ride}/streams?keys=time_s,heart_rate_hz,latlng&resolution=medium`),
    );
    expect(await call("list_metrics", { type: "body_mass_kg" })).toEqual(await v1(pat, "/v1/athletes/me/metrics?type=body_mass_kg"));
    const summary = (await call("get_training_summary", { start: "2026-10-01", end: "2026-10-31" })) as { periods: unknown[] };
    expect(summary.periods).toEqual([
      { start: "2026-10-05", sport_type: "run", count: 2, distance_m: 20001, moving_time_s: 7000, elevation_gain_m: 100 },
      { start: "2026-10-12", sport_type: "run", count: 1, distance_m: 10002, moving_time_s: 3500, elevation_gain_m: 50 },
    ]);

    // A coach reaches a member, through the same reach rules as /v1.
    const coachClient = await mcpClient(await api.pat(coach.id));
    expect((await coachClient.callTool({ name: "list_team_athletes", arguments: {} })).structuredContent).toEqual({
      data: [{ athlete_id: athlete.id, name: "Ava", team_id: teamId, team_name: "Harriers" }],
    });
    const theirs = await coachClient.callTool({ name: "list_activities", arguments: { athlete_id: athlete.id, limit: 50 } });
    expect(theirs.structuredContent).toEqual(await v1(pat, "/v1/athletes/me/activities?limit=50"));
  });

  it("lists a team past what it reads (1,000 members) as truncated, never silently short", async () => {
    const coach = await api.person({ name: "Club coach" });
    // 1,001 athletes written straight into the tables: signing each up would hash 1,001 passwords.
    const athletes = Array.from({ length: 1_001 }, () => newId("ath"));
    await db.insert(users).values(athletes.map((id) => ({ id, email: `${id}@example.test`, name: id, passwordHash: "unused" })));
    await db.insert(athleteProfiles).values(athletes.map((userId) => ({ userId })));
    const teamId = await api.team(coach.id, athletes, { name: "Big club" });
    const client = await mcpClient(await api.pat(coach.id));
    const { tools } = await client.listTools();
    const validate = ajv.compile(tools.find((t) => t.name === "list_team_athletes")!.outputSchema!);

    const result = await client.callTool({ name: "list_team_athletes", arguments: {} });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    const { data, truncated } = result.structuredContent as { data: { athlete_id: string; team_id: string }[]; truncated?: boolean };
    expect(truncated).toBe(true);
    // Ten pages of 100 memberships, the coach's own among them.
    expect(data.length).toBeGreaterThanOrEqual(999);
    expect(data.length).toBeLessThan(athletes.length);
    expect(new Set(data.map((d) => d.athlete_id)).size).toBe(data.length);
    expect(data.every((d) => d.team_id === teamId && athletes.includes(d.athlete_id))).toBe(true);
  });

  it("lists the athletes of a coach of over 1,000 teams in one statement, as truncated", async () => {
    const coach = await api.person({ name: "Many-teams coach" });
    // 1,001 teams of one athlete each, written straight into the tables.
    const athletes = Array.from({ length: 1_001 }, () => newId("ath"));
    await db.insert(users).values(athletes.map((id) => ({ id, email: `${id}@example.test`, name: id, passwordHash: "unused" })));
    await db.insert(athleteProfiles).values(athletes.map((userId) => ({ userId })));
    const teamIds = athletes.map(() => newId("team"));
    await db.insert(teams).values(teamIds.map((id, i) => ({ id, name: `Team ${i}`, createdBy: coach.id })));
    await db.insert(teamMemberships).values(
      teamIds.flatMap((teamId, i) => [
        { teamId, userId: coach.id, role: "coach" as const, status: "active" as const, joinedAt: new Date() },
        { teamId, userId: athletes[i]!, role: "athlete" as const, status: "active" as const, joinedAt: new Date() },
      ]),
    );
    const client = await mcpClient(await api.pat(coach.id));
    // Statements prepared while the call runs (the upload processor's polls among them): walking
    // the teams page by page made two for each team.
    const prepared = vi.spyOn(Object.getPrototypeOf((db as unknown as { session: object }).session) as { prepareQuery: () => unknown }, "prepareQuery");
    const result = await client.callTool({ name: "list_team_athletes", arguments: {} });
    const statements = prepared.mock.calls.length;
    prepared.mockRestore();
    expect(statements).toBeLessThan(50);
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const { data, truncated } = result.structuredContent as { data: { athlete_id: string; team_id: string; team_name: string }[]; truncated?: boolean };
    expect(truncated).toBe(true);
    // The first 1,000 teams by id, each with its one athlete; the coach is not listed.
    const first = [...teamIds].sort().slice(0, 1_000);
    expect(data.map((d) => d.team_id)).toEqual(first);
    for (const d of data) expect(d.athlete_id).toBe(athletes[teamIds.indexOf(d.team_id)]);
  });

  it("answers a call the token's scopes do not allow with 403 insufficient_scope naming every scope to ask for", async () => {
    const person = await api.person();
    const { token } = await oauthToken(person.id, ["athlete.read", "activities.read"]);
    const client = await mcpClient(token);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["get_activity", "get_activity_streams", "get_profile", "get_training_summary", "list_activities"]);

    const metrics = await post(token, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_metrics", arguments: {} } });
    expect(metrics.status).toBe(403);
    expect(((await metrics.json()) as { code: string }).code).toBe("insufficient_scope");
    expect(metrics.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="athlete.read activities.read metrics.read", resource_metadata="${api.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    // As a notification the same call is never answered, so it needs no scope: taken, 202.
    const notified = await post(token, { jsonrpc: "2.0", method: "tools/call", params: { name: "list_metrics", arguments: {} } });
    expect(notified.status).toBe(202);
    expect(notified.headers.get("www-authenticate")).toBeNull();
    const where = await post(token, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_activity_streams", arguments: { id: "act_x", keys: "latlng" } } });
    expect(where.status).toBe(403);
    expect(where.headers.get("www-authenticate")).toContain(`scope="athlete.read activities.read location.read"`);
    // Without latlng the same tool is allowed (and the activity is not found: a tool error).
    const fine = await client.callTool({ name: "get_activity_streams", arguments: { id: "act_nothing", keys: "time_s" } });
    expect(fine.isError).toBe(true);
    expect(JSON.stringify(fine.content)).toContain("act_nothing");
  });

  it("answers a request without a valid token 401 with the challenge that starts discovery", async () => {
    const none = await post(null, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${api.url}/.well-known/oauth-protected-resource/mcp", scope="athlete.read activities.read metrics.read teams.read"`,
    );
    expect(((await none.json()) as { code: string }).code).toBe("token_missing");
    const bad = await post("not-a-token", { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(((await bad.json()) as { code: string }).code).toBe("token_invalid");
  });

  it("binds tokens to their resource both ways: /mcp refuses a /v1 token, /v1 refuses an /mcp token; a PAT works at both", async () => {
    const person = await api.person();
    const forV1 = await oauthToken(person.id, ["athlete.read"], "v1");
    const refused = await post(forV1.token, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string; detail: string }).detail).toContain(`${api.url}/v1`);
    expect((await api.call(forV1.token, "GET", "/v1/athletes/me")).status).toBe(200);

    const forMcp = await oauthToken(person.id, ["athlete.read"], "mcp");
    expect((await post(forMcp.token, { jsonrpc: "2.0", id: 1, method: "tools/list" })).status).toBe(200);
    const v1Refused = await api.call(forMcp.token, "GET", "/v1/athletes/me");
    expect(v1Refused.status).toBe(401);
    expect(((await v1Refused.json()) as { code: string }).code).toBe("token_invalid");

    expect((await post(await api.pat(person.id, ["athlete.read"]), { jsonrpc: "2.0", id: 1, method: "tools/list" })).status).toBe(200);
  });

  it("ends at once when the athlete disconnects the assistant", async () => {
    const person = await api.person();
    const { token, grantId } = await oauthToken(person.id, ["athlete.read"]);
    const client = await mcpClient(token);
    expect((await client.callTool({ name: "get_profile", arguments: {} })).isError).toBeFalsy();
    await inWriteCtx({ db, actor: { kind: "session", userId: person.id } }, (ctx) => disconnectApp({ ctx, grantId }));
    const after = await post(token, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_profile", arguments: {} } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe("token_revoked");
  });

  it("answers 402 for an account without subscription or trial, and counts calls in the token's /v1 window", async () => {
    const lapsed = await api.person({ billing: "expired" });
    const res = await post(await api.pat(lapsed.id), { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { code: string }).code).toBe("subscription_required");

    const person = await api.person();
    const pat = await api.pat(person.id);
    await awayFromWindowEdge();
    const first = await api.call(pat, "GET", "/v1/athletes/me");
    const remaining = (r: Response) => Number(/r=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1]);
    const viaMcp = await post(pat, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(viaMcp.status).toBe(200);
    expect(viaMcp.headers.get("ratelimit")).toBeTruthy();
    const again = await api.call(pat, "GET", "/v1/athletes/me");
    expect(remaining(first) - remaining(again)).toBe(2);
  });

  it("names the bad argument of invalid input in a tool error, and says not found for an activity out of reach", async () => {
    const person = await api.person();
    const stranger = await api.person();
    const strangerPat = await api.pat(stranger.id);
    const made = await api.call(strangerPat, "POST", "/v1/athletes/me/activities", { body: { name: "Theirs", sport_type: "run", start_local: "2026-10-01T07:00:00", elapsed_time_s: 600 } });
    const { id } = (await made.json()) as { id: string };
    const client = await mcpClient(await api.pat(person.id));
    const bad = await client.callTool({ name: "list_activities", arguments: { limit: "many" } }).catch((e: unknown) => ({ isError: true, content: [{ type: "text", text: String(e) }] }));
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain("limit");
    const range = await client.callTool({ name: "get_training_summary", arguments: { start: "2026-10-10", end: "2026-10-01" } }).catch((e: unknown) => ({ isError: true, content: [{ type: "text", text: String(e) }] }));
    expect(range.isError).toBe(true);
    expect(JSON.stringify(range.content)).toContain("end");
    for (const [name, args] of [
      ["get_activity", { id }],
      ["get_activity_streams", { id }],
      ["get_activity", { id: "act_nope" }],
      ["get_activity_streams", { id: "act_nope", keys: "time_s" }],
    ] as const) {
      const hidden = await client.callTool({ name, arguments: args });
      expect(hidden.isError, name).toBe(true);
      expect((hidden.content as { text: string }[])[0]!.text, name).toBe(`Activity ${args.id} was not found.`);
    }
    const notTheirs = await client.callTool({ name: "list_activities", arguments: { athlete_id: stranger.id } });
    expect(notTheirs.isError).toBe(true);
  });

  it("refuses text PostgreSQL cannot store in any tool's arguments as a tool error naming the argument, not as a failure", async () => {
    const pat = await api.pat((await api.person()).id);
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const calls: [string, Record<string, unknown>, string][] = [
      ["get_profile", { athlete_id: "a\u0000" }, "athlete_id"],
      ["list_activities", { athlete_id: "a\u0000" }, "athlete_id"],
      ["list_activities", { cursor: "a\u0000" }, "cursor"],
      ["list_metrics", { athlete_id: "a\u0000" }, "athlete_id"],
      ["get_training_summary", { athlete_id: "a\u0000" }, "athlete_id"],
      ["get_activity", { id: "act_\u0000" }, "id"],
      ["get_activity_streams", { id: "act_\u0000", keys: "time_s" }, "id"],
      // A lone surrogate: PostgreSQL would store U+FFFD, another string than the one sent.
      ["get_profile", { athlete_id: "\ud800" }, "athlete_id"],
    ];
    const failed = vi.spyOn(log, "error");
    try {
      for (const [name, args, field] of calls) {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
        for (const res of await bothWays(headers, body)) {
          expect(res.status).toBe(200);
          const answer = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
          expect(answer.result.isError, body).toBe(true);
          expect(answer.result.content[0]!.text, body).toContain(field);
          expect(answer.result.content[0]!.text, body).not.toMatch(/service failed/);
        }
      }
      expect(failed).not.toHaveBeenCalled();
    } finally {
      failed.mockRestore();
    }
  });

  it("words invalid arguments as /v1 words the same input, naming each argument, both ways a call is answered", async () => {
    const pat = await api.pat((await api.person()).id);
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const calls: [string, Record<string, unknown>, string][] = [
      ["get_activity", {}, "Input validation error: Invalid arguments for tool get_activity: id: is required."],
      [
        "list_activities",
        { limit: "many", start: "2026-13-01" },
        "Input validation error: Invalid arguments for tool list_activities: start: must be a real date in YYYY-MM-DD form; limit: must be a whole number in plain decimal digits (0-9).",
      ],
      ["get_profile", { athleteId: "ath_x" }, "Input validation error: Invalid arguments for tool get_profile: athleteId: is not a known field."],
    ];
    for (const [name, args, text] of calls) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } });
      for (const res of await bothWays(headers, body)) {
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 7, result: { isError: true, content: [{ type: "text", text }] } });
      }
    }
    // What was sent is named back only in part: ten problems at most, each cut to 200 characters.
    const unknown = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 1]));
    const huge = { ["x".repeat(100_000)]: 1 };
    for (const args of [unknown, huge]) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "get_profile", arguments: args } });
      const [res] = await bothWays(headers, body);
      const text = ((await res!.json()) as { result: { content: { text: string }[] } }).result.content[0]!.text;
      expect(text.length).toBeLessThan(2_500);
      expect(text).toMatch(/^Input validation error: Invalid arguments for tool get_profile: /);
    }
    // /v1 words the list's query the same (the texts above are its words).
    const v1 = (await (await api.call(pat, "GET", "/v1/athletes/me/activities?limit=many&start=2026-13-01")).json()) as { errors: { field: string; detail: string }[] };
    expect(v1.errors.map((e) => `${e.field}: ${e.detail}`).sort()).toEqual(["limit: must be a whole number in plain decimal digits (0-9)", "start: must be a real date in YYYY-MM-DD form"]);

    // A list in one argument is named as /v1 names it in its query parameter: the argument, and
    // the item by its place counted from 1; a number that is no whole number is said so.
    const streams = (await (await api.call(pat, "GET", "/v1/activities/act_nothing/streams?keys=time_s,nope")).json()) as { errors: { field: string; detail: string }[] };
    expect(streams.errors.map((e) => `${e.field}: ${e.detail}`)).toEqual([expect.stringMatching(/^keys: item 2: /)]);
    const more: [string, Record<string, unknown>, string][] = [
      ["get_activity_streams", { id: "act_nothing", keys: "time_s,nope" }, `Input validation error: Invalid arguments for tool get_activity_streams: ${streams.errors[0]!.field}: ${streams.errors[0]!.detail}.`],
      ["list_activities", { limit: 5.5 }, "Input validation error: Invalid arguments for tool list_activities: limit: must be a whole number."],
    ];
    for (const [name, args, text] of more) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name, arguments: args } });
      for (const res of await bothWays(headers, body)) {
        expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 9, result: { isError: true, content: [{ type: "text", text }] } });
      }
    }
  });

  it("answers malformed params of any method with JSON-RPC -32602 in a few words, not -32603 with the schema's dump", async () => {
    const pat = await api.pat((await api.person()).id);
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const messages: [unknown, string][] = [
      [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_profile", arguments: null } }, "arguments"],
      [{ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_profile", arguments: [] } }, "arguments"],
      [{ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get_profile", arguments: "x" } }, "arguments"],
      [{ jsonrpc: "2.0", id: 4, method: "tools/list", params: { cursor: 5 } }, "cursor"],
      [{ jsonrpc: "2.0", id: 5, method: "initialize" }, "params"],
      [{ jsonrpc: "2.0", id: 6, method: "initialize", params: { protocolVersion: "2025-11-25" } }, "clientInfo"],
    ];
    for (const [message, field] of messages) {
      const body = JSON.stringify(message);
      for (const res of await bothWays(headers, body)) {
        expect(res.status, body).toBe(200);
        const answer = (await res.json()) as { id: unknown; error: { code: number; message: string } };
        expect(answer, body).toMatchObject({ jsonrpc: "2.0", id: (message as { id: unknown }).id, error: { code: -32602 } });
        expect(answer.error.message, body).toContain(field);
        expect(answer.error.message.length, answer.error.message).toBeLessThan(300);
        expect(answer.error.message, body).not.toMatch(/[[{]/);
      }
    }
    // Well-formed params still reach the SDK's server.
    const list = await post(pat, { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} });
    expect(((await list.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
  });

  it("answers a tools/call itself in the same JSON-RPC response as the SDK's server, and leaves every other message to it", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    await api.team(coach.id, [athlete.id]);
    const pat = await api.pat(athlete.id);
    for (const [i, start] of ["2026-10-05T07:00:00", "2026-10-07T07:00:00"].entries()) {
      const res = await api.call(pat, "POST", "/v1/athletes/me/activities", { body: { name: `Run ${i}`, sport_type: "run", start_local: start, elapsed_time_s: 3600, distance_m: 10_000 } });
      expect(res.status).toBe(201);
    }
    const ride = await upload(pat, "fit/garmin-edge-500-activity.fit");
    const stranger = await api.pat((await api.person()).id);
    const theirs = (await (await api.call(stranger, "POST", "/v1/athletes/me/activities", { body: { name: "Theirs", sport_type: "run", start_local: "2026-10-01T07:00:00", elapsed_time_s: 600 } })).json()) as { id: string };

    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    /** The answer's status, type and JSON, with JSON text in a text content parsed, so two serialisations of one value compare equal. */
    const shape = async (res: Response) => {
      const json = (await res.json()) as { result?: { content?: { type: string; text: string }[] } };
      for (const c of json.result?.content ?? []) {
        try {
          c.text = JSON.parse(c.text) as string;
        } catch {
          // words, not JSON
        }
      }
      return { status: res.status, type: res.headers.get("content-type"), json };
    };
    const connect = vi.spyOn(McpServer.prototype, "connect");
    try {
      const messages: unknown[] = [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_activities", arguments: { limit: 50 } } },
        { jsonrpc: "2.0", id: "a-string-id", method: "tools/call", params: { name: "list_activities", arguments: { athlete_id: "me", start: "2026-10-06" } } },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get_profile" } },
        { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "get_activity", arguments: { id: ride } } },
        { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "get_activity_streams", arguments: { id: ride, keys: "time_s,heart_rate_hz", resolution: "medium" } } },
        { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "list_metrics", arguments: {} } },
        { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get_training_summary", arguments: { start: "2026-10-01", end: "2026-10-31" } } },
        { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "list_team_athletes", arguments: {} } },
        // Tool errors: out of reach, not found.
        { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "get_activity", arguments: { id: theirs.id } } },
        { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "list_activities", arguments: { athlete_id: coach.id } } },
      ];
      for (const message of messages) {
        const calls = connect.mock.calls.length;
        const direct = await shape(await fetch(`${api.url}/mcp`, { method: "POST", headers, body: JSON.stringify(message) }));
        expect(connect.mock.calls.length, "answered without the SDK's server").toBe(calls);
        const viaSdk = await shape(await handleMcpRequest(new Request(`${api.url}/mcp`, { method: "POST", headers, body: JSON.stringify(message) }), { direct: false }));
        expect(connect.mock.calls.length).toBe(calls + 1);
        expect(direct, JSON.stringify(message)).toEqual(viaSdk);
        expect(direct.status).toBe(200);
      }

      // Arguments the schema refuses are answered before any server is built, both ways, in
      // /v1's words (the test of invalid arguments above).
      const invalid = connect.mock.calls.length;
      const refused = await fetch(`${api.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "list_activities", arguments: { limit: "many" } } }) });
      expect(await refused.json()).toMatchObject({ id: 11, result: { isError: true } });
      expect(connect.mock.calls.length).toBe(invalid);

      // What it leaves to the SDK: another method, an Accept header the transport refuses.
      const left: [unknown, Record<string, string>][] = [
        [{ jsonrpc: "2.0", id: 13, method: "tools/list" }, {}],
        [{ jsonrpc: "2.0", id: 15, method: "tools/call", params: { name: "get_profile" } }, { accept: "application/json" }],
        // Invalid arguments with headers the transport refuses: the transport's answer, not a tool error.
        [{ jsonrpc: "2.0", id: 16, method: "tools/call", params: { name: "list_activities", arguments: { limit: "many" } } }, { accept: "application/json" }],
      ];
      for (const [message, extra] of left) {
        const calls = connect.mock.calls.length;
        const res = await fetch(`${api.url}/mcp`, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(message) });
        await res.arrayBuffer();
        expect(connect.mock.calls.length, JSON.stringify(message)).toBe(calls + 1);
      }
    } finally {
      connect.mockRestore();
    }
  });

  it("answers headers the transport refuses (an unsupported MCP-Protocol-Version, no Accept) before anything in the message, whatever it asks", async () => {
    const pat = await api.pat((await api.person()).id, ["athlete.read"]);
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const messages = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "no_such_tool" } },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 1 } },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get_profile", arguments: { athlete_id: "me\u0000" } } },
      // A tool this token's scopes do not allow: no step-up for a request the transport refuses.
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "list_activities", arguments: {} } },
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "get_profile" } },
      // initialize too, which the SDK's transport alone would answer 200 with any version; and
      // as a batch of one, which would then get past the refusal of batches.
      { jsonrpc: "2.0", id: 6, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
      [{ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }],
    ];
    for (const message of messages) {
      const body = JSON.stringify(message);
      for (const res of await bothWays({ ...headers, "mcp-protocol-version": "1999-01-01" }, body)) {
        expect(res.status, body).toBe(400);
        expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringContaining("protocol version") } });
      }
      for (const res of await bothWays({ ...headers, accept: "application/json" }, body)) {
        expect(res.status, body).toBe(406);
      }
    }
  });

  it("takes a response sent to it with 202, however deeply nested its result or error (it sends no requests, so it matches none)", async () => {
    const pat = await api.pat((await api.person()).id, ["athlete.read"]);
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    for (const body of [
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      `{"jsonrpc":"2.0","id":2,"result":{"nested":${deep(10_000)}}}`,
      `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"no","data":${deep(20_000)}}}`,
    ]) {
      for (const res of await bothWays(headers, body)) {
        expect(res.status, body.slice(0, 40)).toBe(202);
        expect(await res.text()).toBe("");
      }
    }
  });

  it("sends no exception's text in an error the SDK's transport answers (error.data), and leaves any other answer as it is", () => {
    const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    const parseError = { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error", data: "RangeError: Maximum call stack size exceeded" } };
    expect(JSON.parse(text(withoutErrorData(bytes(parseError), 400, "t")))).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    const result = { jsonrpc: "2.0", id: 1, result: { data: "kept" } };
    expect(text(withoutErrorData(bytes(result), 200, "t"))).toBe(JSON.stringify(result));
    expect(text(withoutErrorData(new TextEncoder().encode("not json"), 400, "t"))).toBe("not json");
  });

  it("runs a tools/call that asks for a task as a plain call: this server declares no task capability", async () => {
    const pat = await api.pat((await api.person()).id);
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const plain = (await (await post(pat, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_profile" } })).json()) as { result: unknown };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_profile", arguments: {}, task: { ttl: 1000 } } });
    for (const res of await bothWays(headers, body)) {
      expect(res.status).toBe(200);
      const json = (await res.json()) as { result: { structuredContent: unknown }; error?: unknown };
      expect(json.error).toBeUndefined();
      expect(json.result.structuredContent).toEqual((plain.result as { structuredContent: unknown }).structuredContent);
    }
  });

  it("answers a call of a tool it does not have with JSON-RPC -32602, refuses arguments a tool does not name, and declares no list changes", async () => {
    const pat = await api.pat((await api.person()).id);
    const unknown = await post(pat, { jsonrpc: "2.0", id: "u1", method: "tools/call", params: { name: "no_such_tool", arguments: {} } });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ jsonrpc: "2.0", id: "u1", error: { code: -32602, message: expect.stringContaining("no_such_tool") } });
    // A name of a megabyte is not echoed back whole.
    const huge = await post(pat, { jsonrpc: "2.0", id: "u2", method: "tools/call", params: { name: "x".repeat(900_000), arguments: {} } });
    const hugeAnswer = (await huge.json()) as { error: { code: number; message: string } };
    expect(hugeAnswer.error.code).toBe(-32602);
    expect(hugeAnswer.error.message.length).toBeLessThan(400);
    // A listed tool's name with an invisible character is not a tool, and is not named as if it were the listed one.
    for (const [i, name] of ["get_profile\u200b", "get_profile\n", "get_profile\u00a0"].entries()) {
      const answer = (await (await post(pat, { jsonrpc: "2.0", id: `h${i}`, method: "tools/call", params: { name, arguments: {} } })).json()) as { error: { code: number; message: string } };
      expect(answer.error.code, JSON.stringify(name)).toBe(-32602);
      expect(answer.error.message, JSON.stringify(name)).toContain("Unknown tool: get_profile (with invisible, control or space characters in the name)");
    }

    // A misspelt argument is named, not dropped (the call would answer for `me` instead).
    const misspelt = (await (await post(pat, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_profile", arguments: { athleteId: "ath_x" } } })).json()) as {
      result: { isError?: boolean; content: { text: string }[] };
    };
    expect(misspelt.result.isError).toBe(true);
    expect(misspelt.result.content[0]!.text).toContain("athleteId");
    const listed = (await (await post(pat, { jsonrpc: "2.0", id: 3, method: "tools/list" })).json()) as { result: { tools: { name: string; inputSchema: { additionalProperties?: unknown } }[] } };
    for (const t of listed.result.tools) expect(t.inputSchema.additionalProperties, t.name).toBe(false);

    const init = (await (
      await post(pat, { jsonrpc: "2.0", id: 4, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
    ).json()) as { result: { capabilities: { tools: { listChanged?: boolean } } } };
    expect(init.result.capabilities.tools.listChanged).toBe(false);
  });

  it("is stateless: tools/list works without initialize and no Mcp-Session-Id is issued; GET is 405, OPTIONS names the same methods", async () => {
    const pat = await api.pat((await api.person()).id);
    const res = await post(pat, { jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(((await res.json()) as { id: number; result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    const get = await fetch(`${api.url}/mcp`, { headers: { authorization: `Bearer ${pat}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    const options = await fetch(`${api.url}/mcp`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("POST, OPTIONS");
  });

  it("lists no tools, rather than failing, for a token whose scopes allow none", async () => {
    const pat = await api.pat((await api.person()).id, ["activities.write", "metrics.write"]);
    const res = await post(pat, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: { tools: [] } });
    const init = await post(pat, { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1" } } });
    expect(((await init.json()) as { result: { capabilities: { tools?: unknown } } }).result.capabilities.tools).toBeDefined();
  });

  it("takes one message per request: a batch is refused (400, JSON-RPC -32600), its calls not answered", async () => {
    const pat = await api.pat((await api.person()).id);
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_profile", arguments: {} } });
    const res = await post(pat, [call(1), call(2)]);
    expect(res.status).toBe(400);
    const refused = (await res.json()) as { result?: unknown; error: { code: number } };
    expect(refused).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(refused.result).toBeUndefined();
    expect(res.headers.get("ratelimit")).toBeTruthy();
    expect((await post(pat, call(3))).status).toBe(200);
  });

  it("answers a body that is no JSON in JSON-RPC's shape: -32700 Parse error (400), or 415 for another media type", async () => {
    const pat = await api.pat((await api.person()).id);
    const send = (body: BodyInit, type = "application/json") =>
      fetch(`${api.url}/mcp`, { method: "POST", headers: { authorization: `Bearer ${pat}`, "content-type": type, accept: "application/json, text/event-stream" }, body });
    for (const body of ['{"jsonrpc":"2.0","id":1,', "", new Uint8Array([0x7b, 0xff, 0x7d])]) {
      const res = await send(body);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: /) } });
      expect(res.headers.get("ratelimit")).toBeTruthy();
    }
    const text = await send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', "text/plain");
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
  });

  it("answers JSON that is no JSON-RPC message with -32600 Invalid Request (400), not a parse error", async () => {
    const pat = await api.pat((await api.person()).id);
    for (const body of [
      {},
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: "x" },
      { jsonrpc: "2.0", id: 1 },
      { jsonrpc: "1.0", id: 1, method: "ping" },
      "ping",
      5,
      // An id no number holds exactly, and one with a fraction: no id, so the envelope is wrong.
      { jsonrpc: "2.0", id: 1e300, method: "tools/list" },
      { jsonrpc: "2.0", id: 1.5, method: "tools/list" },
    ]) {
      const res = await post(pat, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json(), JSON.stringify(body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } });
      expect(res.headers.get("ratelimit")).toBeTruthy();
    }
    // A well-formed notification is still taken (202, no body), as MCP has it.
    expect((await post(pat, { jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
    // A request whose envelope is right but whose `_meta` is not: Invalid params, with its id.
    for (const _meta of [{ progressToken: {} }, null]) {
      const res = await post(pat, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get_profile", arguments: {}, _meta } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32602, message: expect.stringMatching(/^Invalid params for tools\/call: params\._meta/) } });
    }
    // A member beside jsonrpc, id, method and params: the envelope is wrong (Invalid Request),
    // whatever the method, answered with the id it names.
    for (const method of ["tools/list", "ping", "no/such/method"]) {
      const res = await post(pat, { jsonrpc: "2.0", id: 8, method, extra: 1 });
      expect(await res.json(), method).toMatchObject({
        jsonrpc: "2.0",
        id: 8,
        error: { code: -32600, message: 'Invalid Request: unknown member "extra"; a JSON-RPC 2.0 request has only "jsonrpc", "id", "method" and "params".' },
      });
    }
  });

  it("refuses a request from a web page of another origin (403), and serves this service's own", async () => {
    const pat = await api.pat((await api.person()).id);
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const foreign = await fetch(`${api.url}/mcp`, { method: "POST", headers: { ...headers, origin: "https://evil.example" }, body: list });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
    const own = await fetch(`${api.url}/mcp`, { method: "POST", headers: { ...headers, origin: new URL(api.url).origin }, body: list });
    expect(own.status).toBe(200);
  });

  it("sends the SDK's JSON answers whole, with their length (so a short one is not gzipped in production)", async () => {
    const pat = await api.pat((await api.person()).id);
    const res = await post(pat, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
    });
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    expect(res.headers.get("content-length")).toBe(String(body.byteLength));
    expect(res.headers.get("transfer-encoding")).toBeNull();
    expect((JSON.parse(new TextDecoder().decode(body)) as { result: { serverInfo: unknown } }).result.serverInfo).toBeDefined();
  });
});

