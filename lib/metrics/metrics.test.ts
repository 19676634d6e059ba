import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { events, metrics } from "../db/schema";
import { Metric, MetricList, METRIC_BOUNDS, METRIC_TYPES } from "./schemas";

const api = setupApi();

async function record(token: string, body: Record<string, unknown>) {
  const res = await api.call(token, "POST", "/v1/athletes/me/metrics", { body });
  expect(res.status, await res.clone().text()).toBe(201);
  return Metric.parse(await res.json());
}

async function list(token: string, path: string) {
  const res = await api.call(token, "GET", path);
  expect(res.status, await res.clone().text()).toBe(200);
  return MetricList.parse(await res.json());
}

describe("POST /v1/athletes/me/metrics", () => {
  it("records a metric: 201 with the metric in SI units", async () => {
    const p = await api.person();
    const res = await api.call(await api.pat(p.id, ["metrics.write"]), "POST", "/v1/athletes/me/metrics", {
      body: { type: "resting_heart_rate_hz", value: 0.8, measured_local: "2026-03-01T06:30:00" },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({
      id: expect.stringMatching(/^met_[0-9A-Za-z]{22}$/),
      athlete_id: p.id,
      type: "resting_heart_rate_hz",
      value: 0.8,
      measured_local: "2026-03-01T06:30:00",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
    });
  });

  it("accepts each type's bounds and refuses values just outside them with 400 naming `value`", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["metrics.write"]);
    for (const type of METRIC_TYPES) {
      const [lo, hi] = METRIC_BOUNDS[type];
      for (const value of [lo, hi]) {
        expect((await record(token, { type, value, measured_local: "2026-03-01T06:30:00" })).value).toBe(value);
      }
      const before = { metrics: await countRows(metrics), events: await countRows(events) };
      for (const value of [lo - Math.max(lo * 0.01, 0.0001), hi + hi * 0.01]) {
        const res = await api.call(token, "POST", "/v1/athletes/me/metrics", {
          body: { type, value, measured_local: "2026-03-01T06:30:00" },
        });
        expect(res.status, `${type}=${value}`).toBe(400);
        const body = await res.json();
        expect(body.code).toBe("invalid_request");
        expect(body.errors).toEqual([expect.objectContaining({ field: "value", code: "invalid_request" })]);
      }
      expect({ metrics: await countRows(metrics), events: await countRows(events) }).toEqual(before);
    }
  });

  it("refuses an unknown type (invalid_enum_value) and an impossible local time (invalid_date)", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["metrics.write"]);
    const unknownType = await api.call(token, "POST", "/v1/athletes/me/metrics", {
      body: { type: "steps", value: 1000, measured_local: "2026-03-01T06:30:00" },
    });
    expect(unknownType.status).toBe(400);
    expect(await unknownType.json()).toMatchObject({
      code: "invalid_enum_value",
      errors: [expect.objectContaining({ field: "type", code: "invalid_enum_value" })],
    });
    const badDate = await api.call(token, "POST", "/v1/athletes/me/metrics", {
      body: { type: "body_mass_kg", value: 70, measured_local: "2026-02-30T06:30:00" },
    });
    expect(badDate.status).toBe(400);
    expect(await badDate.json()).toMatchObject({
      code: "invalid_date",
      errors: [expect.objectContaining({ field: "measured_local", code: "invalid_date" })],
    });
  });

  it("emits exactly one metric.created event with the metric, in the same transaction", async () => {
    const p = await api.person();
    const before = await countRows(events);
    const m = await record(await api.pat(p.id, ["metrics.write"]), {
      type: "body_mass_kg",
      value: 71.4,
      measured_local: "2026-03-01T06:30:00",
    });
    expect(await countRows(events)).toBe(before + 1);
    const db = await api.db();
    const rows = await db.select().from(events).where(eq(events.objectId, m.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: "metric.created", athleteId: p.id, objectType: "metric" });
    const [row] = await db.select().from(metrics).where(eq(metrics.id, m.id));
    expect(rows[0]!.occurredAt.getTime()).toBe(row!.createdAt.getTime());
  });

  it("records only for the token's own athlete: a coach cannot record for a member (403, nothing written)", async () => {
    const coach = await api.person();
    const member = await api.person();
    await api.team(coach.id, [member.id]);
    const before = { metrics: await countRows(metrics), events: await countRows(events) };
    const res = await api.call(await api.pat(coach.id, ["metrics.write"]), "POST", `/v1/athletes/${member.id}/metrics`, {
      body: { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T06:30:00" },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe("athlete_not_reachable");
    expect({ metrics: await countRows(metrics), events: await countRows(events) }).toEqual(before);
  });
});

describe("GET /v1/athletes/{athlete_id}/metrics", () => {
  it("lists newest first, filters by type, and reads start (inclusive) and end (exclusive) as local dates", async () => {
    const p = await api.person({ timezone: "America/New_York" });
    const token = await api.pat(p.id, ["metrics.read", "metrics.write"]);
    const lateFirst = await record(token, { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T23:59:59" });
    const sleep = await record(token, { type: "sleep_duration_s", value: 27_000, measured_local: "2026-03-02T00:00:00" });
    const mass = await record(token, { type: "body_mass_kg", value: 70.2, measured_local: "2026-03-02T07:00:00" });
    const third = await record(token, { type: "body_mass_kg", value: 70.1, measured_local: "2026-03-03T00:00:00" });
    const ids = async (q: string) => (await list(token, `/v1/athletes/me/metrics${q}`)).data.map((m) => m.id);

    expect(await ids("")).toEqual([third.id, mass.id, sleep.id, lateFirst.id]);
    expect(await ids("?type=body_mass_kg")).toEqual([third.id, mass.id, lateFirst.id]);
    expect(await ids("?start=2026-03-02&end=2026-03-03")).toEqual([mass.id, sleep.id]);
    expect(await ids("?start=2026-03-02&end=2026-03-03&type=sleep_duration_s")).toEqual([sleep.id]);
    expect(await ids("?end=2026-03-02")).toEqual([lateFirst.id]);
  });

  it("pages with next_cursor through every metric exactly once", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["metrics.read", "metrics.write"]);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      made.push((await record(token, { type: "body_mass_kg", value: 70 + i / 10, measured_local: `2026-03-0${1 + (i % 3)}T06:00:00` })).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(token, `/v1/athletes/me/metrics?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      seen.push(...page.data.map((m) => m.id));
      cursor = page.next_cursor;
    } while (cursor && seen.length <= made.length);
    expect(seen).toEqual((await list(token, "/v1/athletes/me/metrics?limit=200")).data.map((m) => m.id));
    expect([...seen].sort()).toEqual([...made].sort());
  });

  it("refuses an unknown type, an impossible date and an end before start with their own codes", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["metrics.read"]);
    const cases: [string, string, string][] = [
      ["?type=steps", "invalid_enum_value", "type"],
      ["?start=2026-02-30", "invalid_date", "start"],
      ["?start=2026-03-02&end=2026-03-01", "invalid_parameter_combination", "end"],
    ];
    for (const [q, code, field] of cases) {
      const res = await api.call(token, "GET", `/v1/athletes/me/metrics${q}`);
      expect(res.status, q).toBe(400);
      expect(await res.json()).toMatchObject({ code, errors: [expect.objectContaining({ field, code })] });
    }
  });

  it("lets a coach read an active member's metrics, and refuses a stranger with 403 athlete_not_reachable", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [member.id]);
    const m = await record(await api.pat(member.id, ["metrics.write"]), {
      type: "heart_rate_variability_s",
      value: 0.065,
      measured_local: "2026-03-01T06:30:00",
    });
    const page = await list(await api.pat(coach.id, ["metrics.read"]), `/v1/athletes/${member.id}/metrics`);
    expect(page.data).toEqual([m]);
    const res = await api.call(await api.pat(stranger.id, ["metrics.read"]), "GET", `/v1/athletes/${member.id}/metrics`);
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe("athlete_not_reachable");
  });
});

describe("GET /v1/metrics/{metric_id}", () => {
  it("answers the metric a metric.created event names, at the Location its creation gave", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["metrics.read", "metrics.write"]);
    const created = await api.call(token, "POST", "/v1/athletes/me/metrics", {
      body: { type: "sleep_duration_s", value: 27_000, measured_local: "2026-03-02T00:00:00" },
    });
    expect(created.status).toBe(201);
    const m = Metric.parse(await created.json());
    expect(created.headers.get("location")).toBe(`/v1/metrics/${m.id}`);
    const [event] = await (await api.db()).select().from(events).where(eq(events.objectId, m.id));
    const res = await api.call(token, "GET", `/v1/metrics/${event!.objectId}`);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(Metric.parse(await res.json())).toEqual(m);
  });

  it("lets a coach read an active member's metric; a stranger, an unknown id and an overlong one get the same 404", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [member.id]);
    const m = await record(await api.pat(member.id, ["metrics.write"]), { type: "body_mass_kg", value: 64.2, measured_local: "2026-03-01T06:30:00" });
    const coachRead = await api.call(await api.pat(coach.id, ["metrics.read"]), "GET", `/v1/metrics/${m.id}`);
    expect(coachRead.status).toBe(200);
    expect(await coachRead.json()).toEqual(m);
    const strangerToken = await api.pat(stranger.id, ["metrics.read"]);
    for (const id of [m.id, "met_doesnotexist", "x".repeat(65)]) {
      const res = await api.call(strangerToken, "GET", `/v1/metrics/${id}`);
      expect(res.status, id).toBe(404);
      expect((await res.json()).code).toBe("not_found");
    }
    const wrongScope = await api.call(await api.pat(member.id, ["activities.read"]), "GET", `/v1/metrics/${m.id}`);
    expect(wrongScope.status).toBe(403);
    expect(wrongScope.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="metrics.read"`);
  });
});

describe("DELETE /v1/metrics/{metric_id}", () => {
  it("deletes the athlete's own metric (204) and emits one metric.deleted; GET is 404 after, a delete again 404, the same key a replay", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["metrics.read", "metrics.write"]);
    const m = await record(token, { type: "body_mass_kg", value: 17, measured_local: "2026-03-01T06:30:00" });
    const del = await api.call(token, "DELETE", `/v1/metrics/${m.id}`, { headers: { "idempotency-key": "typo-17" } });
    expect(del.status).toBe(204);
    expect((await api.call(token, "GET", `/v1/metrics/${m.id}`)).status).toBe(404);
    expect((await list(token, "/v1/athletes/me/metrics")).data).toEqual([]);
    const db = await api.db();
    const emitted = await db.select().from(events).where(eq(events.objectId, m.id));
    expect(emitted.map((e) => e.type).sort()).toEqual(["metric.created", "metric.deleted"]);
    expect(emitted.find((e) => e.type === "metric.deleted")).toMatchObject({ athleteId: p.id, objectType: "metric" });
    const replay = await api.call(token, "DELETE", `/v1/metrics/${m.id}`, { headers: { "idempotency-key": "typo-17" } });
    expect(replay.status).toBe(204);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await api.call(token, "DELETE", `/v1/metrics/${m.id}`)).status).toBe(404);
    expect(await countRows(events, eq(events.objectId, m.id))).toBe(2);
  });

  it("a coach reads a member's metric but may not delete it (403); a stranger gets 404; metrics.read alone is 403 insufficient_scope; nothing changes", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [member.id]);
    const m = await record(await api.pat(member.id, ["metrics.write"]), { type: "sleep_duration_s", value: 25_000, measured_local: "2026-03-01T06:30:00" });
    const before = { metrics: await countRows(metrics), events: await countRows(events) };
    const byCoach = await api.call(await api.pat(coach.id, ["metrics.read", "metrics.write"]), "DELETE", `/v1/metrics/${m.id}`);
    expect(byCoach.status).toBe(403);
    expect((await byCoach.json()).code).toBe("athlete_not_reachable");
    const byStranger = await api.call(await api.pat(stranger.id, ["metrics.write"]), "DELETE", `/v1/metrics/${m.id}`);
    expect(byStranger.status).toBe(404);
    const readOnly = await api.call(await api.pat(member.id, ["metrics.read"]), "DELETE", `/v1/metrics/${m.id}`);
    expect(readOnly.status).toBe(403);
    expect(readOnly.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="metrics.write"`);
    expect({ metrics: await countRows(metrics), events: await countRows(events) }).toEqual(before);
  });
});

describe("scopes", () => {
  it("reads need metrics.read and writes metrics.write; activity scopes do not stand in for them", async () => {
    const p = await api.person();
    const body = { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T06:30:00" };
    const cases: [readonly ("metrics.read" | "metrics.write" | "activities.read" | "activities.write")[], string, string][] = [
      [["metrics.write"], "GET", "metrics.read"],
      [["activities.read", "activities.write"], "GET", "metrics.read"],
      [["metrics.read"], "POST", "metrics.write"],
      [["activities.read", "activities.write"], "POST", "metrics.write"],
    ];
    const before = await countRows(metrics);
    for (const [scopes, method, needed] of cases) {
      const res = await api.call(await api.pat(p.id, scopes), method, "/v1/athletes/me/metrics", {
        body: method === "POST" ? body : undefined,
      });
      expect(res.status, `${method} with ${scopes.join(" ")}`).toBe(403);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="${needed}"`);
      expect((await res.json()).code).toBe("insufficient_scope");
    }
    expect(await countRows(metrics)).toBe(before);
    expect((await api.call(await api.pat(p.id, ["metrics.read"]), "GET", "/v1/athletes/me/metrics")).status).toBe(200);
    expect((await api.call(await api.pat(p.id, ["metrics.write"]), "POST", "/v1/athletes/me/metrics", { body })).status).toBe(201);
  });
});
