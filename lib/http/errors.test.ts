import path from "node:path";
import { describe, expect, it } from "vitest";
import { routeFiles } from "../testing/route-files";
import { inWriteCtx } from "./operation";
import { eq } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { writeCounts } from "../testing/rows";
import { activities, personalAccessTokens } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { generateToken } from "../tokens/format";
import { createPersonalAccessToken, revokePersonalAccessToken } from "../tokens/personal-access-tokens";
import { newId } from "../ids";
import { MAX_BODY_BYTES } from "./body";
import { PROBLEM_CODES, type ProblemCode } from "./errors";
import { SummaryQuery } from "../activities/training-summary";
import { z } from "zod";
import { OPERATIONS } from "../openapi/operations";
import { webhookRows } from "../testing/webhook-rows";

const api = setupApi();

const RUN = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };

/** A request whose body is sent byte for byte, with no JSON encoding or default content type. */
function raw(token: string | null, method: string, path: string, body?: BodyInit, headers: Record<string, string> = {}) {
  return fetch(api.url + path, {
    method,
    body,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    // @ts-expect-error Node's fetch needs this for streamed bodies
    duplex: "half",
  });
}

/** Asserts an RFC 9457 problem with CONTRACT §3's members, and returns it. */
async function expectProblem(res: Response, status: number, code: ProblemCode) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = JSON.parse(text) as { type: string; title: string; status: number; detail: string; code: string; errors?: unknown };
  expect(body).toMatchObject({
    type: `${api.url}/problems/${code}`,
    title: PROBLEM_CODES[code].title,
    status,
    code,
    detail: expect.any(String),
  });
  return body as typeof body & { errors?: { field: string; code: string; detail: string }[] };
}

async function writer() {
  const p = await api.person();
  return { person: p, token: await api.pat(p.id) };
}

describe("400: malformed requests", () => {
  it("invalid_request for JSON that does not parse, names `body` in errors", async () => {
    const { token } = await writer();
    const res = await raw(token, "POST", "/v1/athletes/me/activities", '{"name": "Run",', { "content-type": "application/json" });
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.errors).toEqual([expect.objectContaining({ field: "body", code: "invalid_request" })]);
  });

  it("invalid_request for a field of the wrong type, naming the field", async () => {
    const { token } = await writer();
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, elapsed_time_s: "1800" } });
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.errors).toEqual([expect.objectContaining({ field: "elapsed_time_s", code: "invalid_request" })]);
  });

  it("invalid_request for an unknown body field, naming that field", async () => {
    const { token } = await writer();
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, pace_min_per_km: 5 } });
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.errors).toEqual([expect.objectContaining({ field: "pace_min_per_km", code: "invalid_request" })]);
  });

  it("invalid_request for a body that is not UTF-8", async () => {
    const { token } = await writer();
    const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","sport_type":"run"}')]);
    const res = await raw(token, "POST", "/v1/athletes/me/activities", bytes, { "content-type": "application/json" });
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.detail).toMatch(/UTF-8/);
    expect(body.errors).toEqual([expect.objectContaining({ field: "body", code: "invalid_request" })]);
  });

  it("invalid_request for an empty body, with or without a JSON content type", async () => {
    const { token } = await writer();
    for (const headers of [{}, { "content-type": "application/json" }] as Record<string, string>[]) {
      const res = await raw(token, "POST", "/v1/athletes/me/activities", undefined, headers);
      const body = await expectProblem(res, 400, "invalid_request");
      expect(body.errors).toEqual([expect.objectContaining({ field: "body", code: "invalid_request" })]);
    }
  });

  it("invalid_request for a body sent as another content type, even if it is JSON", async () => {
    const { token } = await writer();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json-seq", "application/json; charset=utf-16", "application/json;charset=\"UTF-32LE\""]) {
      const res = await raw(token, "POST", "/v1/athletes/me/activities", JSON.stringify(RUN), { "content-type": type });
      const body = await expectProblem(res, 400, "invalid_request");
      expect(body.errors).toEqual([expect.objectContaining({ field: "body", code: "invalid_request" })]);
    }
    // application/json with a charset, and +json types, are JSON.
    // A charset parameter has no effect on JSON (RFC 8259): an ASCII-compatible one some clients add is ignored.
    for (const type of ["application/json; charset=utf-8", "application/json;charset=\"UTF-8\"", "application/json; charset=ISO-8859-1", "application/vnd.api+json", "APPLICATION/JSON"]) {
      const ok = await raw(token, "POST", "/v1/athletes/me/activities", JSON.stringify({ ...RUN, start_local: `2026-0${1 + (type.length % 8)}-01T07:00:00` }), { "content-type": type });
      expect(ok.status, type).toBe(201);
    }
  });

  it("invalid_date for days that do not exist, in the query and in the body", async () => {
    const { token } = await writer();
    for (const date of ["2026-02-30", "2026-13-01", "2026-3-1", "yesterday"]) {
      const q = await api.call(token, "GET", `/v1/athletes/me/activities?start=${date}`);
      const qb = await expectProblem(q, 400, "invalid_date");
      expect(qb.errors).toEqual([expect.objectContaining({ field: "start", code: "invalid_date" })]);
      const e = await api.call(token, "GET", `/v1/athletes/me/metrics?end=${date}`);
      expect((await expectProblem(e, 400, "invalid_date")).errors).toEqual([expect.objectContaining({ field: "end" })]);
    }
    for (const start of ["2026-02-30T07:30:00", "2026-13-01T07:30:00", "2026-03-01T24:00:00", "2026-03-01T07:30:00Z"]) {
      const b = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, start_local: start } });
      const bb = await expectProblem(b, 400, "invalid_date");
      expect(bb.errors).toEqual([expect.objectContaining({ field: "start_local", code: "invalid_date" })]);
    }
    // A real day outside the years served is refused saying so, not called unreal; a day that
    // is not real in its own year (0100 was no leap year) is called unreal.
    for (const [date, detail] of [
      ["1899-12-31", "must be in the years 1900 to 2200"],
      ["9999-12-31", "must be in the years 1900 to 2200"],
      ["0100-02-29", "must be a real date in YYYY-MM-DD form"],
    ] as const) {
      const q = await api.call(token, "GET", `/v1/athletes/me/activities?end=${date}`);
      expect((await expectProblem(q, 400, "invalid_date")).errors, date).toEqual([{ field: "end", code: "invalid_date", detail }]);
      const b = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, start_local: `${date}T07:30:00` } });
      expect((await expectProblem(b, 400, "invalid_date")).errors, date).toEqual([expect.objectContaining({ field: "start_local", detail: detail.replace("real date in YYYY-MM-DD form", "real local time in YYYY-MM-DDTHH:MM:SS form, without an offset") })]);
    }
    expect((await api.call(token, "GET", "/v1/athletes/me/activities?start=1900-01-01&end=2200-12-31")).status).toBe(200);
  });

  it("invalid_enum_value for an unknown sport_type, in the body and in the query", async () => {
    const { token } = await writer();
    const b = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, sport_type: "parkour" } });
    expect((await expectProblem(b, 400, "invalid_enum_value")).errors).toEqual([
      expect.objectContaining({ field: "sport_type", code: "invalid_enum_value" }),
    ]);
    const q = await api.call(token, "GET", "/v1/athletes/me/activities?sport_type=parkour");
    expect((await expectProblem(q, 400, "invalid_enum_value")).errors).toEqual([
      expect.objectContaining({ field: "sport_type", code: "invalid_enum_value" }),
    ]);
  });

  it("invalid_parameter_combination for an end before start", async () => {
    const { token } = await writer();
    const res = await api.call(token, "GET", "/v1/athletes/me/activities?start=2026-03-02&end=2026-03-01");
    expect((await expectProblem(res, 400, "invalid_parameter_combination")).errors).toEqual([
      expect.objectContaining({ field: "end", code: "invalid_parameter_combination" }),
    ]);
  });

  it("invalid_request naming a query parameter given more than once, rather than answering for its last value", async () => {
    const { token } = await writer();
    const res = await api.call(token, "GET", "/v1/athletes/me/activities?sport_type=run&limit=5&sport_type=ride");
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.errors).toEqual([expect.objectContaining({ field: "sport_type", code: "invalid_request", detail: expect.stringMatching(/more than once/) })]);
    // The same parameters each given once are answered.
    expect((await api.call(token, "GET", "/v1/athletes/me/activities?sport_type=ride&limit=5")).status).toBe(200);
  });

  it("invalid_request naming each query parameter the route does not know (a Strava client's per_page, a typo), rather than answering the whole list", async () => {
    const { token } = await writer();
    const res = await api.call(token, "GET", "/v1/athletes/me/activities?per_page=10&sport=ride&limit=5");
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.errors).toEqual([
      { field: "per_page", code: "invalid_request", detail: "is not a known parameter" },
      { field: "sport", code: "invalid_request", detail: "is not a known parameter" },
    ]);
    // Its checks still run with it: an end before start is refused as before.
    const range = await api.call(token, "GET", "/v1/athletes/me/metrics?start=2026-03-02&end=2026-03-01");
    expect((await expectProblem(range, 400, "invalid_parameter_combination")).errors).toEqual([expect.objectContaining({ field: "end" })]);
    expect((await expectProblem(await api.call(token, "GET", "/v1/athletes/me/metrics?after=1700000000"), 400, "invalid_request")).errors).toEqual([
      expect.objectContaining({ field: "after", detail: "is not a known parameter" }),
    ]);
    // An operation that takes no query refuses any parameter too, and does nothing: a DELETE stays undone.
    const created = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Kept", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 },
    });
    const { id } = (await created.json()) as { id: string };
    for (const [method, path, field] of [
      ["GET", "/v1/athletes/me?fields=name", "fields"],
      ["DELETE", `/v1/activities/${id}?force=true`, "force"],
      ["GET", `/v1/activities/${id}/laps?limit=abc`, "limit"],
    ] as const) {
      expect((await expectProblem(await api.call(token, method, path), 400, "invalid_request")).errors, path).toEqual([
        { field, code: "invalid_request", detail: "is not a known parameter" },
      ]);
    }
    expect((await api.call(token, "GET", `/v1/activities/${id}`)).status).toBe(200);
    expect((await api.call(token, "GET", "/v1/athletes/me?")).status).toBe(200);
  });

  it("invalid_date alone for a date that is not one, whatever the other end of the range (no end-before-start as well)", async () => {
    const { token } = await writer();
    for (const path of ["/v1/athletes/me/activities?start=2026-1-5&end=2026-01-10", "/v1/athletes/me/metrics?start=2026-02-30&end=2026-02-01"]) {
      const res = await api.call(token, "GET", path);
      expect((await expectProblem(res, 400, "invalid_date")).errors, path).toEqual([expect.objectContaining({ field: "start", code: "invalid_date" })]);
    }
    // The training summary's range (the console's and the MCP tool's) is the same shape.
    expect(SummaryQuery.safeParse({ start: "2026-1-5", end: "2026-01-10" }).error?.issues.map((i) => i.path)).toEqual([["start"]]);
  });

  it("invalid_request, listing each field, when several kinds of problem come together", async () => {
    const { token } = await writer();
    const res = await api.call(token, "GET", "/v1/athletes/me/activities?start=2026-02-30&sport_type=parkour&limit=0");
    const body = await expectProblem(res, 400, "invalid_request");
    expect(body.errors?.map((e) => [e.field, e.code]).sort()).toEqual([
      ["limit", "invalid_request"],
      ["sport_type", "invalid_enum_value"],
      ["start", "invalid_date"],
    ]);
  });

  it("invalid_request naming the parameter for an integer query parameter that is not plain decimal digits, on every /v1 operation that takes one", async () => {
    const { person, token } = await writer();
    const app = await api.app();
    const teamId = await api.team(person.id, []);
    const hook = await webhookRows(api.db).subscribe(app.clientId, "https://127.0.0.1/hook");
    const ids: Record<string, string> = { athlete_id: "me", team_id: teamId, id: hook.id };
    // Every integer parameter of every query schema, read from the schemas themselves, so a new
    // one is covered the day it is added.
    const cases = OPERATIONS.flatMap((op) => {
      const props = (op.query ? z.toJSONSchema(op.query, { io: "input" }).properties ?? {} : {}) as Record<string, { type?: string }>;
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
      return Object.entries(props)
        .filter(([, s]) => s.type === "integer")
        .map(([param]) => ({ op, path, param, bearer: op.auth === "app" ? app.token : token }));
    });
    // `limit` on the seven lists: activities, metrics, teams, team members, webhooks, deliveries, events.
    expect(cases.map((c) => c.param)).toEqual(Array(7).fill("limit"));
    // What JavaScript's Number() reads as a number, and a few it does not.
    const bad = ["0x10", "1e2", " 5", "5 ", "5.0", "5.", "+5", "", "0b11", "1_0", "Infinity", "\u0665", "5\u00a0", "1".repeat(40)];
    for (const { op, path, param, bearer } of cases) {
      for (const value of bad) {
        const res = await api.call(bearer, op.method, `${path}?${param}=${encodeURIComponent(value)}`);
        const body = await expectProblem(res, 400, "invalid_request");
        expect(body.errors, `${op.operationId} ${param}=${JSON.stringify(value)}`).toEqual([
          { field: param, code: "invalid_request", detail: "must be a whole number in plain decimal digits (0-9)" },
        ]);
      }
      // The same number in plain digits is fine, leading zeros included; out of range stays a range error.
      for (const value of ["5", "005"]) expect((await api.call(bearer, op.method, `${path}?${param}=${value}`)).status, `${op.operationId} ${value}`).toBe(200);
      const big = await expectProblem(await api.call(bearer, op.method, `${path}?${param}=201`), 400, "invalid_request");
      expect(big.errors).toEqual([expect.objectContaining({ field: param, detail: expect.stringContaining("200") })]);
    }
  });

  it("invalid_cursor for a cursor this API did not issue, including a well-formed forgery", async () => {
    const { token } = await writer();
    const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const cursors = [
      "garbage",
      forged(["2026-03-01 07:30:00"]),
      forged([1, 2]),
      forged(["not a time", "act_x"]),
      forged(["2026-02-30 07:30:00", "act_x"]),
      // Longer than any cursor the API issues.
      "A".repeat(600),
    ];
    for (const path of ["/v1/athletes/me/activities", "/v1/athletes/me/metrics"]) {
      for (const cursor of cursors) {
        const res = await api.call(token, "GET", `${path}?cursor=${encodeURIComponent(cursor)}`);
        const body = await expectProblem(res, 400, "invalid_cursor");
        expect(body.errors).toEqual([expect.objectContaining({ field: "cursor", code: "invalid_cursor" })]);
      }
    }
  });

  it("invalid_cursor for a cursor another list issued: the activities' and the metrics' are not each other's", async () => {
    const { token } = await writer();
    for (const day of ["01", "02"]) {
      const at = `2026-03-${day}T07:30:00`;
      expect((await api.call(token, "POST", "/v1/athletes/me/activities", { body: { name: "Run", sport_type: "run", start_local: at, elapsed_time_s: 60 } })).status).toBe(201);
      expect((await api.call(token, "POST", "/v1/athletes/me/metrics", { body: { type: "body_mass_kg", value: 70, measured_local: at } })).status).toBe(201);
    }
    const cursorOf = async (path: string) => ((await (await api.call(token, "GET", `${path}?limit=1`)).json()) as { next_cursor: string }).next_cursor;
    const lists = ["/v1/athletes/me/activities", "/v1/athletes/me/metrics"];
    const [activities, metrics] = await Promise.all(lists.map(cursorOf));
    expect((await api.call(token, "GET", `${lists[0]}?cursor=${activities}`)).status).toBe(200);
    expect((await api.call(token, "GET", `${lists[1]}?cursor=${metrics}`)).status).toBe(200);
    await expectProblem(await api.call(token, "GET", `${lists[0]}?cursor=${metrics}`), 400, "invalid_cursor");
    await expectProblem(await api.call(token, "GET", `${lists[1]}?cursor=${activities}`), 400, "invalid_cursor");
  });
});

describe("401: no valid token", () => {
  const metadata = () => `${api.url}/.well-known/oauth-protected-resource/v1`;

  it("token_missing without an Authorization header, pointing at the protected-resource metadata", async () => {
    const res = await api.call(null, "GET", "/v1/athletes/me");
    await expectProblem(res, 401, "token_missing");
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadata()}"`);
    // An empty header sends no token either: no error code in the challenge (RFC 6750 §3.1).
    const empty = await api.call(null, "GET", "/v1/athletes/me", { headers: { authorization: "" } });
    await expectProblem(empty, 401, "token_missing");
    expect(empty.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadata()}"`);
  });

  it("token_invalid for garbage, another scheme, an unknown well-formed PAT and a PAT with a bad checksum", async () => {
    const p = await api.person();
    const real = await api.pat(p.id);
    const last = real.slice(-1);
    const badChecksum = real.slice(0, -1) + (last === "0" ? "1" : "0");
    const headers = [
      "Bearer garbage",
      "Bearer ",
      `Basic ${Buffer.from("ava:pw").toString("base64")}`,
      `Bearer ${generateToken("pat")}`,
      `Bearer ${badChecksum}`,
      `Bearer ${real.slice(0, 20)}`,
    ];
    for (const authorization of headers) {
      const res = await api.call(null, "GET", "/v1/athletes/me", { headers: { authorization } });
      await expectProblem(res, 401, "token_invalid");
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain(`resource_metadata="${metadata()}"`);
      expect(challenge).toContain('error="invalid_token"');
    }
    // The real token itself works.
    expect((await api.call(real, "GET", "/v1/athletes/me")).status).toBe(200);
  });

  it("token_expired once a PAT's expires_at has passed", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["athlete.read"], 7);
    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    const db = await api.db();
    await db
      .update(personalAccessTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(personalAccessTokens.userId, p.id));
    const res = await api.call(token, "GET", "/v1/athletes/me");
    await expectProblem(res, 401, "token_expired");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("token_revoked on the very next request after revocation", async () => {
    const p = await api.person();
    const db = await api.db();
    const session = { db, actor: { kind: "session" as const, userId: p.id } };
    const { token, summary } = await inWriteCtx(session, (ctx) => createPersonalAccessToken({ ctx, input: { name: "script", scopes: ["athlete.read"], expires_in_days: null } }));
    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    await inWriteCtx(session, (ctx) => revokePersonalAccessToken({ ctx, tokenId: summary.id }));
    const res = await api.call(token, "GET", "/v1/athletes/me");
    await expectProblem(res, 401, "token_revoked");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

describe("402, 403", () => {
  it("402 subscription_required for an account whose trial ended, on reads and writes", async () => {
    const ben = await api.person({ billing: "expired" });
    const token = await api.pat(ben.id);
    await expectProblem(await api.call(token, "GET", "/v1/athletes/me/activities"), 402, "subscription_required");
    await expectProblem(await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN }), 402, "subscription_required");
  });

  it("403 insufficient_scope names the missing scope; 403 athlete_not_reachable and team_not_reachable for reach", async () => {
    const p = await api.person();
    const other = await api.person();
    const scope = await api.call(await api.pat(p.id, ["athlete.read"]), "GET", "/v1/athletes/me/activities");
    await expectProblem(scope, 403, "insufficient_scope");
    expect(scope.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="activities.read"');
    const token = await api.pat(p.id);
    await expectProblem(await api.call(token, "GET", `/v1/athletes/${other.id}`), 403, "athlete_not_reachable");
    const team = await api.team(other.id, [p.id]);
    await expectProblem(await api.call(token, "GET", `/v1/teams/${team}/members`), 403, "team_not_reachable");
  });
});

describe("404 and 405", () => {
  it("an id in the path that cannot be one of the API's (too long, a NUL) is an unknown id: 404, or 403 for an athlete or a team", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const long = "act_" + "x".repeat(100);
    for (const path of [`/v1/activities/${long}`, `/v1/activities/${long}/streams`, "/v1/activities/act_%00x", `/v1/uploads/${long}`]) {
      const body = await expectProblem(await api.call(token, "GET", path), 404, "not_found");
      expect(body.detail, path).toMatch(/not an id this API makes/);
    }
    await expectProblem(await api.call(token, "PATCH", `/v1/activities/${long}`, { body: { name: "x" } }), 404, "not_found");
    await expectProblem(await api.call(token, "GET", `/v1/athletes/${"ath_" + "x".repeat(100)}`), 403, "athlete_not_reachable");
    await expectProblem(await api.call(token, "GET", `/v1/athletes/${"x".repeat(100)}/activities`), 403, "athlete_not_reachable");
    await expectProblem(await api.call(await api.pat(p.id, ["teams.read"]), "GET", `/v1/teams/${"team_" + "x".repeat(100)}/members`), 403, "team_not_reachable");
  });

  it("404 not_found as a problem document, never HTML, for unknown /v1 paths and any method", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const paths = ["/v1", "/v1/nope", "/v1/activities", "/v1/athletes", "/v1/athletes/me/activities/extra", "/v1/teams/x/members/y"];
    for (const path of paths) {
      for (const method of ["GET", "POST", "DELETE"]) {
        for (const t of [token, null]) {
          const res = await api.call(t, method, path, method === "POST" ? { body: RUN } : {});
          const body = await expectProblem(res, 404, "not_found");
          expect(body.detail).toContain(path);
        }
      }
    }
  });

  it("lets browser apps on any origin read /v1 answers and errors, with the headers they need; the console's cookie routes stay same-origin", async () => {
    const { token } = await writer();
    for (const res of [await api.call(token, "GET", "/v1/athletes/me"), await api.call("aas_pat_nope", "GET", "/v1/athletes/me")]) {
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-expose-headers")).toMatch(/RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate/);
    }
    const console = await fetch(`${api.url}/api/console/tokens`);
    expect(console.status).toBe(401);
    expect(console.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("404 not_found for an activity id that does not exist", async () => {
    const { token } = await writer();
    await expectProblem(await api.call(token, "GET", `/v1/activities/${newId("act")}`), 404, "not_found");
  });

  it("405 method_not_allowed with Allow, on every route file", async () => {
    const cases: [string, string[], string][] = [
      ["/v1/athletes/me", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/athletes/me/activities", ["PUT", "PATCH", "DELETE"], "GET, POST, HEAD, OPTIONS"],
      ["/v1/athletes/me/metrics", ["PUT", "PATCH", "DELETE"], "GET, POST, HEAD, OPTIONS"],
      ["/v1/activities/act_x", ["POST", "PUT"], "GET, PATCH, DELETE, HEAD, OPTIONS"],
      ["/v1/activities/act_x/streams", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/activities/act_x/laps", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/activities/act_x/export", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/athletes/me/uploads", ["GET", "PUT", "PATCH", "DELETE"], "POST, OPTIONS"],
      ["/v1/uploads/upl_x", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/teams", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/teams/team_x/members", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
      ["/v1/openapi.json", ["POST", "PUT", "PATCH", "DELETE"], "GET, HEAD, OPTIONS"],
    ];
    const { token } = await writer();
    for (const [path, methods, allow] of cases) {
      for (const method of methods) {
        const res = await api.call(token, method, path, method === "DELETE" || method === "GET" ? {} : { body: RUN });
        await expectProblem(res, 405, "method_not_allowed");
        expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      }
      // A method no route serves (WebDAV's): the path's own 405, counted and headed like any answer.
      const webdav = await api.call(token, "PROPFIND", path);
      expect(await expectProblem(webdav, 405, "method_not_allowed"), `PROPFIND ${path}`).toMatchObject({ detail: `PROPFIND is not served here; this path serves ${allow}.` });
      expect(webdav.headers.get("allow"), `PROPFIND ${path}`).toBe(allow);
      expect(webdav.headers.get("ratelimit"), `PROPFIND ${path}`).toContain('"15min"');
      // OPTIONS names the same methods, and counts and carries the headers like any answer.
      const options = await api.call(token, "OPTIONS", path);
      expect(options.status, `OPTIONS ${path}`).toBe(204);
      expect(options.headers.get("allow"), `OPTIONS ${path}`).toBe(allow);
      expect(options.headers.get("ratelimit"), `OPTIONS ${path}`).toContain('"15min"');
      // It is a browser's preflight too (lib/http/cors.ts): any origin, these methods, a bearer token.
      expect(options.headers.get("access-control-allow-origin"), `OPTIONS ${path}`).toBe("*");
      expect(options.headers.get("access-control-allow-methods"), `OPTIONS ${path}`).toBe(allow);
      expect(options.headers.get("access-control-allow-headers"), `OPTIONS ${path}`).toContain("Authorization");
    }
    // At a path no route serves, the path is what is wrong.
    const nowhere = await api.call(token, "MKCOL", "/v1/nothing/here");
    await expectProblem(nowhere, 404, "not_found");
    expect(nowhere.headers.get("ratelimit")).toContain('"15min"');
    // Every route file answers OPTIONS itself, not Next.js (whose answer lists every export).
    for (const file of routeFiles(path.resolve(__dirname, "../../app/v1"))) {
      expect(((await import(file)) as { OPTIONS?: unknown }).OPTIONS, file).toBeTypeOf("function");
    }
  });

  it("405 method_not_allowed with Allow on the public documents too (discovery metadata, the signing keys), which GET still serves", async () => {
    const paths = ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/v1", "/.well-known/oauth-protected-resource/mcp", "/oauth/jwks"];
    for (const path of paths) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const res = await fetch(`${api.url}${path}`, { method, body: method === "DELETE" ? undefined : "{}" });
        await expectProblem(res, 405, "method_not_allowed");
        expect(res.headers.get("allow"), `${method} ${path}`).toBe("GET, HEAD, OPTIONS");
        expect(res.headers.get("access-control-allow-origin"), `${method} ${path}`).toBe("*");
      }
      const options = await fetch(`${api.url}${path}`, { method: "OPTIONS" });
      expect(options.status, `OPTIONS ${path}`).toBe(204);
      expect(options.headers.get("allow"), `OPTIONS ${path}`).toBe("GET, HEAD, OPTIONS");
      const get = await fetch(`${api.url}${path}`);
      expect(get.status, path).toBe(200);
      expect(get.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(get.headers.get("cache-control"), path).toMatch(/^public, max-age=\d+$/);
      expect(Object.keys(await get.json()).length, path).toBeGreaterThan(0);
    }
  });
});

describe("413: bodies over 1 MiB", () => {
  const big = () => JSON.stringify({ ...RUN, name: "x".repeat(MAX_BODY_BYTES) });

  it("payload_too_large when Content-Length declares more than 1 MiB", async () => {
    const { token } = await writer();
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: big() });
    await expectProblem(res, 413, "payload_too_large");
    // The refused bytes were consumed: the kept-alive connection carries the next request.
    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
  });

  it("payload_too_large for a streamed body that grows past 1 MiB without declaring its length", async () => {
    const { token } = await writer();
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'));
        if (sent > MAX_BODY_BYTES * 2) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.byteLength;
      },
    });
    const res = await raw(token, "POST", "/v1/athletes/me/activities", stream, { "content-type": "application/json" });
    await expectProblem(res, 413, "payload_too_large");
    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
  });

  it("accepts a body just under the limit (it is the size that is refused, not the request)", async () => {
    const { token } = await writer();
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: JSON.stringify({ ...RUN, name: "Run" + " ".repeat(MAX_BODY_BYTES - 200) }),
    });
    expect(res.status).toBe(201);
  });
});

describe("a refused write writes nothing", () => {
  it("leaves activities, metrics, events and idempotency keys untouched for every refusal", async () => {
    const { person, token } = await writer();
    const coach = await api.person();
    await api.team(coach.id, [person.id]);
    const coachToken = await api.pat(coach.id, ["activities.read", "activities.write"]);
    const readOnly = await api.pat(person.id, ["activities.read"]);
    const ben = await api.person({ billing: "expired" });
    const benToken = await api.pat(ben.id);
    const expired = await api.pat(person.id, ["activities.write"], 7);
    const revoked = await inWriteCtx({ db: await api.db(), actor: { kind: "session", userId: person.id } }, (ctx) => createPersonalAccessToken({ ctx, input: { name: "gone", scopes: ["activities.write"], expires_in_days: null } }));
    const mine = (await (await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN })).json()) as { id: string };
    const db = await api.db();
    await db
      .update(personalAccessTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(personalAccessTokens.tokenHash, sha256Hex(expired)));
    await inWriteCtx({ db, actor: { kind: "session", userId: person.id } }, (ctx) => revokePersonalAccessToken({ ctx, tokenId: revoked.summary.id }));
    const [before] = await db.select().from(activities).where(eq(activities.id, mine.id));

    const json = { "content-type": "application/json" };
    type Attempt = [label: string, status: number, send: () => Promise<Response>];
    const attempts: Attempt[] = [
      ["malformed JSON", 400, () => raw(token, "POST", "/v1/athletes/me/activities", "{", json)],
      ["wrong type", 400, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, elapsed_time_s: "x" } })],
      ["unknown field", 400, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, x: 1 } })],
      ["bad UTF-8", 400, () => raw(token, "POST", "/v1/athletes/me/activities", Buffer.from([0x7b, 0xff, 0x7d]), json)],
      ["empty body", 400, () => raw(token, "POST", "/v1/athletes/me/activities")],
      ["text/plain", 400, () => raw(token, "POST", "/v1/athletes/me/activities", JSON.stringify(RUN), { "content-type": "text/plain" })],
      ["invalid date", 400, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, start_local: "2026-02-30T07:00:00" } })],
      ["unknown enum", 400, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, sport_type: "parkour" } })],
      ["patch invalid", 400, () => api.call(token, "PATCH", `/v1/activities/${mine.id}`, { body: { name: "ok", distance_m: -1 } })],
      ["patch empty", 400, () => api.call(token, "PATCH", `/v1/activities/${mine.id}`, { body: {} })],
      ["no token", 401, () => api.call(null, "POST", "/v1/athletes/me/activities", { body: RUN })],
      ["garbage token", 401, () => api.call("garbage", "POST", "/v1/athletes/me/activities", { body: RUN })],
      ["expired token", 401, () => api.call(expired, "POST", "/v1/athletes/me/activities", { body: RUN })],
      ["revoked token", 401, () => api.call(revoked.token, "PATCH", `/v1/activities/${mine.id}`, { body: { name: "x" } })],
      ["no subscription", 402, () => api.call(benToken, "POST", "/v1/athletes/me/activities", { body: RUN })],
      ["read-only token", 403, () => api.call(readOnly, "POST", "/v1/athletes/me/activities", { body: RUN })],
      ["read-only patch", 403, () => api.call(readOnly, "PATCH", `/v1/activities/${mine.id}`, { body: { name: "x" } })],
      ["for someone else", 403, () => api.call(token, "POST", `/v1/athletes/${coach.id}/activities`, { body: RUN })],
      ["coach edits member", 403, () => api.call(coachToken, "PATCH", `/v1/activities/${mine.id}`, { body: { name: "x" } })],
      ["unknown activity", 404, () => api.call(token, "PATCH", `/v1/activities/${newId("act")}`, { body: { name: "x" } })],
      ["unknown path", 404, () => api.call(token, "POST", "/v1/athletes/me/workouts", { body: RUN })],
      ["wrong method", 405, () => api.call(token, "PUT", `/v1/activities/${mine.id}`, { body: RUN })],
      ["too large", 413, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, name: "x".repeat(MAX_BODY_BYTES) } })],
    ];
    for (const [label, status, send] of attempts) {
      const counts = await writeCounts();
      const res = await send();
      expect(res.status, label).toBe(status);
      await res.arrayBuffer();
      expect(await writeCounts(), label).toEqual(counts);
    }
    const [after] = await db.select().from(activities).where(eq(activities.id, mine.id));
    expect(after).toEqual(before);
  });

  it("keeps idempotency keys free after refusals made with one", async () => {
    const { token } = await writer();
    const readOnly = await api.pat((await api.person()).id, ["activities.read"]);
    const other = await api.person();
    const refusals: [string, number, () => Promise<Response>][] = [
      ["invalid", 400, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...RUN, sport_type: "parkour" }, headers: { "idempotency-key": "k1" } })],
      ["scope", 403, () => api.call(readOnly, "POST", "/v1/athletes/me/activities", { body: RUN, headers: { "idempotency-key": "k1" } })],
      ["reach", 403, () => api.call(token, "POST", `/v1/athletes/${other.id}/activities`, { body: RUN, headers: { "idempotency-key": "k1" } })],
    ];
    for (const [label, status, send] of refusals) {
      const counts = await writeCounts();
      const res = await send();
      expect(res.status, label).toBe(status);
      expect(await writeCounts(), label).toEqual(counts);
    }
    const ok = await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN, headers: { "idempotency-key": "k1" } });
    expect(ok.status).toBe(201);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
  });
});
