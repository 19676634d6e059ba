import { describe, expect, it } from "vitest";
import { z } from "zod";
import { and, eq, sql } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { activities, events } from "../db/schema";
import { newId } from "../ids";
import { Activity, ActivityList, CreateActivityInput, UpdateActivityInput } from "./schemas";
import { updateActivity } from "./update-activity";
import { inTransaction } from "../db/transaction";
import { rowsOf } from "../db/client";
import { ApiError } from "../http/errors";
import { inWriteCtx } from "../http/operation";

const api = setupApi();

type Wire = ReturnType<typeof Activity.parse>;

/** The measurements: the fields a new activity may leave out. */
const MEASUREMENTS = Object.entries(CreateActivityInput.shape)
  .filter(([, schema]) => schema.safeParse(undefined).success)
  .map(([field]) => field as keyof Wire);

async function record(token: string, body: Record<string, unknown> = {}): Promise<Wire> {
  const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
    body: { name: "Easy run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return Activity.parse(await res.json());
}

async function list(token: string, path: string) {
  const res = await api.call(token, "GET", path);
  expect(res.status, await res.clone().text()).toBe(200);
  return ActivityList.parse(await res.json());
}

/** Inserts activities straight into the table, for tests that need many. */
async function seed(athleteId: string, starts: string[]): Promise<void> {
  const db = await api.db();
  await db.insert(activities).values(
    starts.map((s, i) => ({
      id: newId("act"),
      athleteId,
      name: `Seeded ${i}`,
      sportType: "run",
      startLocal: s.replace("T", " "),
      elapsedTimeS: 600,
    })),
  );
}

describe("GET /v1/athletes/{athlete_id}/activities", () => {
  it("lists each activity exactly as it is read alone: the SQL-built list and the JavaScript wire form agree", async () => {
    const ava = await api.person();
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    await record(token, {
      name: "Tempo",
      distance_m: 0.1 + 0.2,
      elevation_gain_m: 12345.678901234567,
      average_speed_mps: 1e-7,
      max_speed_mps: 1 / 3,
      average_heart_rate_hz: 2.5,
      energy_j: 0,
    });
    await record(token, { name: "Bare", sport_type: "ride", start_local: "2026-02-28T23:59:59" });
    // Characters JSON escapes, controls among them, which no input passes any more but a table
    // recorded before may hold.
    await (await api.db()).execute(sql`update activities set name = ${'Tempo "Loop" \\ \u00e5 \u{1F3C3}\n\t\u0001'} where athlete_id = ${ava.id} and name = 'Tempo'`);
    // Microseconds, which the API's millisecond timestamps truncate.
    await (await api.db()).execute(sql`update activities set created_at = '2026-03-01 10:11:12.987654+00', updated_at = '2026-03-02 01:02:03.000999+00' where athlete_id = ${ava.id}`);
    // Extremes of double precision that no input passes but a table may hold.
    await (await api.db()).execute(sql`update activities set average_power_w = 1e21, max_heart_rate_hz = 5e-324 where athlete_id = ${ava.id} and name = 'Bare'`);
    const listed = await list(token, "/v1/athletes/me/activities");
    expect(listed.data).toHaveLength(2);
    const listText = await (await api.call(token, "GET", "/v1/athletes/me/activities")).text();
    for (const item of listed.data) {
      const alone = await api.call(token, "GET", `/v1/activities/${item.id}`);
      const aloneText = await alone.text();
      expect(item).toStrictEqual(JSON.parse(aloneText));
      // Byte for byte: both compact, the same keys in the same order, the same numbers.
      expect(listText).toContain(aloneText);
    }
    expect(listText).not.toMatch(/" : |", "/);
    expect(listed.data[0]!.created_at).toBe("2026-03-01T10:11:12.987Z");
    expect(listed.data[0]!.updated_at).toBe("2026-03-02T01:02:03.000Z");
  });

  it("gives each measurement the precision it is worth, in the list and alone: 10 km in 3,000 s is 3.333 m/s", async () => {
    const ava = await api.person();
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    const made = await record(token, { distance_m: 10_000, moving_time_s: 3_000, elapsed_time_s: 3_100, max_speed_mps: 1 / 3, average_heart_rate_hz: 145 / 60, elevation_gain_m: 0.1 + 0.2 });
    const alone = (await (await api.call(token, "GET", `/v1/activities/${made.id}`)).json()) as Record<string, unknown>;
    expect(alone).toMatchObject({ average_speed_mps: 3.333, max_speed_mps: 0.333, average_heart_rate_hz: 2.4167, elevation_gain_m: 0.3 });
    const listed = await list(token, "/v1/athletes/me/activities");
    expect(listed.data[0]).toStrictEqual(alone);
  });

  it("lists the athlete's activities newest first, and only theirs", async () => {
    const ava = await api.person();
    const eve = await api.person();
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    const middle = await record(token, { start_local: "2026-03-02T12:00:00" });
    const oldest = await record(token, { start_local: "2026-03-01T06:00:00" });
    const newest = await record(token, { start_local: "2026-03-03T18:00:00" });
    await record(await api.pat(eve.id, ["activities.write"]), { start_local: "2026-03-02T13:00:00" });

    const page = await list(token, "/v1/athletes/me/activities");
    expect(page.data.map((a) => a.id)).toEqual([newest.id, middle.id, oldest.id]);
    expect(page.next_cursor).toBeNull();
    expect(await list(token, `/v1/athletes/${ava.id}/activities`)).toEqual(page);
  });

  it("reads `start` as inclusive and `end` as exclusive local dates, against wall-clock start_local", async () => {
    // The athlete lives at UTC+14: a UTC conversion anywhere would move these across the day line.
    const p = await api.person({ timezone: "Pacific/Kiritimati" });
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const lateFirst = await record(token, { start_local: "2026-03-01T23:59:59" });
    const midnightSecond = await record(token, { start_local: "2026-03-02T00:00:00" });
    const lateSecond = await record(token, { start_local: "2026-03-02T23:59:59" });
    const midnightThird = await record(token, { start_local: "2026-03-03T00:00:00" });
    const ids = async (q: string) => (await list(token, `/v1/athletes/me/activities?${q}`)).data.map((a) => a.id);

    expect(await ids("start=2026-03-02&end=2026-03-03")).toEqual([lateSecond.id, midnightSecond.id]);
    expect(await ids("start=2026-03-02")).toEqual([midnightThird.id, lateSecond.id, midnightSecond.id]);
    expect(await ids("end=2026-03-02")).toEqual([lateFirst.id]);
    expect(await ids("start=2026-03-03&end=2026-03-04")).toEqual([midnightThird.id]);
    // An empty range is a valid question with an empty answer, not an error.
    expect(await ids("start=2026-03-02&end=2026-03-02")).toEqual([]);
  });

  it("filters by sport_type", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const ride = await record(token, { sport_type: "ride", start_local: "2026-03-01T08:00:00" });
    await record(token, { sport_type: "run", start_local: "2026-03-02T08:00:00" });
    const ride2 = await record(token, { sport_type: "ride", start_local: "2026-03-03T08:00:00" });
    const page = await list(token, "/v1/athletes/me/activities?sport_type=ride");
    expect(page.data.map((a) => a.id)).toEqual([ride2.id, ride.id]);
    expect((await list(token, "/v1/athletes/me/activities?sport_type=swim")).data).toEqual([]);
  });

  it("pages with next_cursor through every activity exactly once, including ties on start_local", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read"]);
    const starts: string[] = [];
    for (let day = 1; day <= 9; day++) starts.push(`2026-04-0${day}T06:00:00`);
    // Six activities share one start, so the id must break the tie, across page boundaries too.
    for (let i = 0; i < 6; i++) starts.push("2026-04-05T12:00:00");
    for (let i = 0; i < 8; i++) starts.push(`2026-03-${10 + i}T23:59:59`);
    await seed(p.id, starts);

    const all = await list(token, "/v1/athletes/me/activities?limit=200");
    expect(all.data).toHaveLength(starts.length);
    expect(all.next_cursor).toBeNull();
    const keys = all.data.map((a) => a.start_local);
    expect(keys).toEqual([...keys].sort().reverse());

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `limit=4&cursor=${encodeURIComponent(cursor)}` : "limit=4";
      const page = await list(token, `/v1/athletes/me/activities?${q}`);
      expect(page.data.length).toBeLessThanOrEqual(4);
      seen.push(...page.data.map((a) => a.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(pages).toBe(Math.ceil(starts.length / 4));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(all.data.map((a) => a.id));
  });

  it("keeps filters while paging: start/end and sport_type apply to every page", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read"]);
    await seed(p.id, ["2026-05-01T10:00:00", "2026-05-02T10:00:00", "2026-05-03T10:00:00", "2026-05-04T10:00:00", "2026-05-05T10:00:00"]);
    const first = await list(token, "/v1/athletes/me/activities?start=2026-05-02&end=2026-05-05&limit=2");
    expect(first.data.map((a) => a.start_local)).toEqual(["2026-05-04T10:00:00", "2026-05-03T10:00:00"]);
    const second = await list(
      token,
      `/v1/athletes/me/activities?start=2026-05-02&end=2026-05-05&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`,
    );
    expect(second.data.map((a) => a.start_local)).toEqual(["2026-05-02T10:00:00"]);
    expect(second.next_cursor).toBeNull();
  });

  it("takes limit from 1 to 200, defaults to 50, and refuses 0 and 201 with 400 naming `limit`", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read"]);
    await seed(
      p.id,
      Array.from({ length: 55 }, (_, i) => `2026-01-${String(1 + (i % 28)).padStart(2, "0")}T${String(i % 24).padStart(2, "0")}:00:00`),
    );
    const byDefault = await list(token, "/v1/athletes/me/activities");
    expect(byDefault.data).toHaveLength(50);
    expect(byDefault.next_cursor).not.toBeNull();
    expect((await list(token, "/v1/athletes/me/activities?limit=1")).data).toHaveLength(1);
    expect((await list(token, "/v1/athletes/me/activities?limit=200")).data).toHaveLength(55);
    for (const bad of ["0", "201", "-1", "1.5", "ten"]) {
      const res = await api.call(token, "GET", `/v1/athletes/me/activities?limit=${bad}`);
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.code).toBe("invalid_request");
      expect(body.errors).toEqual([expect.objectContaining({ field: "limit", code: "invalid_request" })]);
    }
  });

  it("lets a coach list an active member's activities and refuses a stranger with 403 athlete_not_reachable", async () => {
    const coach = await api.person();
    const member = await api.person();
    const invited = await api.person();
    await api.team(coach.id, [member.id]);
    await api.team(coach.id, [invited.id], { memberStatus: "invited" });
    const run = await record(await api.pat(member.id, ["activities.write"]));
    await record(await api.pat(invited.id, ["activities.write"]));
    const coachToken = await api.pat(coach.id, ["activities.read"]);

    expect((await list(coachToken, `/v1/athletes/${member.id}/activities`)).data.map((a) => a.id)).toEqual([run.id]);
    for (const [token, id] of [
      [coachToken, invited.id],
      [await api.pat(member.id, ["activities.read"]), coach.id],
      [await api.pat(invited.id, ["activities.read"]), member.id],
    ] as const) {
      const res = await api.call(token, "GET", `/v1/athletes/${id}/activities`);
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe("athlete_not_reachable");
    }
  });
});

describe("GET /v1/activities/{activity_id}", () => {
  it("returns the activity as it was created", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const created = await record(token, { distance_m: 5000 });
    const res = await api.call(token, "GET", `/v1/activities/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual(created);
  });

  it("answers the same 404 for another athlete's activity and for an id that does not exist", async () => {
    const owner = await api.person();
    const other = await api.person();
    const theirs = await record(await api.pat(owner.id, ["activities.write"]));
    const token = await api.pat(other.id, ["activities.read"]);
    const unknownId = newId("act");

    const hidden = await api.call(token, "GET", `/v1/activities/${theirs.id}`);
    const missing = await api.call(token, "GET", `/v1/activities/${unknownId}`);
    for (const res of [hidden, missing]) {
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
    }
    const a = await hidden.json();
    const b = await missing.json();
    expect(a.code).toBe("not_found");
    // Only the id the caller sent differs.
    expect({ ...a, detail: a.detail.replace(theirs.id, "ID") }).toEqual({ ...b, detail: b.detail.replace(unknownId, "ID") });
  });

  it("lets a coach read an active member's activity, but not an invited athlete's", async () => {
    const coach = await api.person();
    const member = await api.person();
    const invited = await api.person();
    await api.team(coach.id, [member.id]);
    await api.team(coach.id, [invited.id], { memberStatus: "invited" });
    const memberRun = await record(await api.pat(member.id, ["activities.write"]));
    const invitedRun = await record(await api.pat(invited.id, ["activities.write"]));
    const token = await api.pat(coach.id, ["activities.read"]);

    const ok = await api.call(token, "GET", `/v1/activities/${memberRun.id}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual(memberRun);
    expect((await api.call(token, "GET", `/v1/activities/${invitedRun.id}`)).status).toBe(404);
  });
});

describe("POST /v1/athletes/me/activities", () => {
  it("creates the activity: 201, SI fields, local start, instants in UTC", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write"]);
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: {
        name: "Tempo",
        sport_type: "run",
        start_local: "2026-03-01T07:30:00",
        elapsed_time_s: 3000,
        moving_time_s: 2900,
        distance_m: 10_150.5,
        elevation_gain_m: 85,
        average_speed_mps: 3.5,
        max_speed_mps: 5.2,
        average_heart_rate_hz: 2.5,
        max_heart_rate_hz: 3.05,
        average_power_w: 280,
        energy_j: 2_900_000,
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^act_[0-9A-Za-z]{22}$/),
      athlete_id: p.id,
      name: "Tempo",
      sport_type: "run",
      start_local: "2026-03-01T07:30:00",
      elapsed_time_s: 3000,
      moving_time_s: 2900,
      distance_m: 10_150.5,
      elevation_gain_m: 85,
      average_speed_mps: 3.5,
      max_speed_mps: 5.2,
      average_heart_rate_hz: 2.5,
      max_heart_rate_hz: 3.05,
      average_power_w: 280,
      energy_j: 2_900_000,
      source: "manual",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(() => Activity.parse(body)).not.toThrow();
  });

  it("answers null, never an absent member, for every measurement that was not sent", async () => {
    const p = await api.person();
    const a = await record(await api.pat(p.id, ["activities.write"]), { sport_type: "yoga" });
    expect(MEASUREMENTS).toContain("distance_m");
    for (const field of MEASUREMENTS) {
      expect(Object.hasOwn(a, field), field).toBe(true);
      expect(a[field], field).toBeNull();
    }
  });

  it("keeps an average speed sent as null (not known) as null, and derives one only when it is left out", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write"]);
    expect((await record(token, { distance_m: 5000, elapsed_time_s: 1000, average_speed_mps: null })).average_speed_mps).toBeNull();
    expect((await record(token, { distance_m: 5000, elapsed_time_s: 1000 })).average_speed_mps).toBe(5);
  });

  it("also accepts the athlete's own id in place of `me`", async () => {
    const p = await api.person();
    const res = await api.call(await api.pat(p.id, ["activities.write"]), "POST", `/v1/athletes/${p.id}/activities`, {
      body: { name: "Swim", sport_type: "swim", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1200 },
    });
    expect(res.status).toBe(201);
    expect((await res.json()).athlete_id).toBe(p.id);
  });

  it("emits exactly one activity.created event, committed in the same transaction as the activity", async () => {
    const p = await api.person();
    const before = await countRows(events);
    const a = await record(await api.pat(p.id, ["activities.write"]));
    expect(await countRows(events)).toBe(before + 1);

    const db = await api.db();
    const rows = await db.select().from(events).where(eq(events.objectId, a.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: "activity.created", athleteId: p.id, objectType: "activity", clientId: null });
    // now() is the transaction's start time: equal stamps mean one transaction wrote both rows.
    const [act] = await db.select().from(activities).where(eq(activities.id, a.id));
    expect(rows[0]!.occurredAt.getTime()).toBe(act!.createdAt.getTime());
  });

  it("writes no activity when its event cannot be written (one transaction: both or neither)", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write"]);
    const db = await api.db();
    await db.execute(sql`create function refuse_event() returns trigger language plpgsql as $$
      begin raise exception 'events refused by test'; end $$`);
    await db.execute(sql`create trigger refuse_event before insert on events for each row execute function refuse_event()`);
    try {
      const before = await countRows(activities);
      const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
        body: { name: "Lost", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 60 },
      });
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(body).toMatchObject({ code: "internal_error", trace_id: expect.any(String) });
      expect(await countRows(activities)).toBe(before);
    } finally {
      await db.execute(sql`drop trigger refuse_event on events`);
      await db.execute(sql`drop function refuse_event()`);
    }
  });

  it("refuses a moving_time_s longer than elapsed_time_s: 400 invalid_parameter_combination naming moving_time_s, nothing written", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800, moving_time_s: 1801 },
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.code).toBe("invalid_parameter_combination");
    expect(body.errors).toEqual([{ field: "moving_time_s", code: "invalid_parameter_combination", detail: "moving_time_s must not exceed elapsed_time_s" }]);
    expect(await countRows(activities, eq(activities.athleteId, p.id))).toBe(0);
    expect(await countRows(events, eq(events.athleteId, p.id))).toBe(0);
    // All of the elapsed time spent moving is fine, and so is a moving time not known.
    expect((await record(token, { moving_time_s: 1800 })).moving_time_s).toBe(1800);
    expect((await record(token, { moving_time_s: null })).moving_time_s).toBeNull();
  });

  it("takes back an activity as it answered it: an average derived from distance and time is not held to the maximum, in a create or a change", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    // A treadmill's distance gives 3.333 m/s; its device measured a maximum of 3.
    const a = await record(token, { distance_m: 10_000, elapsed_time_s: 3000, max_speed_mps: 3 });
    expect(a).toMatchObject({ average_speed_mps: 3.333, max_speed_mps: 3 });
    const { id, athlete_id: _athlete, created_at: _c, updated_at: _u, source: _s, ...asRead } = a;
    const patch = (body: Record<string, unknown>) => api.call(token, "PATCH", `/v1/activities/${id}`, { body });
    // Sent back whole, or the pair alone: no change, nothing refused or written.
    for (const body of [asRead, { name: "Treadmill run", average_speed_mps: 3.333, max_speed_mps: 3 }]) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
    }
    expect(await countRows(events, and(eq(events.objectId, id), eq(events.type, "activity.updated")))).toBe(1);
    // The distance corrected, with the average it now derives stated: taken as the derived one is.
    expect(await (await patch({ distance_m: 20_000, average_speed_mps: 6.667 })).json()).toMatchObject({ average_speed_mps: 6.667, max_speed_mps: 3 });
    // A create that states the average its distance and time give, above its maximum: taken too.
    const created = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Copy", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 3000, distance_m: 10_000, average_speed_mps: 3.333, max_speed_mps: 3 },
    });
    expect(created.status).toBe(201);
    // An average that is not distance over time is held to the maximum still.
    const stated = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Copy", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 3000, distance_m: 10_000, average_speed_mps: 3.2, max_speed_mps: 3 },
    });
    expect(stated.status).toBe(400);
  });

  it("names every pair out of order in one refusal, so a form shows each on its field", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 2400, moving_time_s: 2700, average_heart_rate_hz: 2.6, max_heart_rate_hz: 2.5 },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toEqual([
      { field: "moving_time_s", code: "invalid_parameter_combination", detail: "moving_time_s must not exceed elapsed_time_s" },
      { field: "max_heart_rate_hz", code: "invalid_parameter_combination", detail: "max_heart_rate_hz must not be below average_heart_rate_hz" },
    ]);
    expect(await countRows(activities, eq(activities.athleteId, p.id))).toBe(0);
  });

  it("refuses a maximum below its average (speed, heart rate): 400 invalid_parameter_combination naming the maximum, nothing written", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const base = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };
    for (const [extra, field, detail] of [
      [{ average_speed_mps: 3.2, max_speed_mps: 3.1 }, "max_speed_mps", "max_speed_mps must not be below average_speed_mps"],
      [{ average_heart_rate_hz: 2.5, max_heart_rate_hz: 2.4 }, "max_heart_rate_hz", "max_heart_rate_hz must not be below average_heart_rate_hz"],
    ] as const) {
      const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...base, ...extra } });
      expect(res.status, field).toBe(400);
      const body = await res.json();
      expect(body.code).toBe("invalid_parameter_combination");
      expect(body.errors).toEqual([{ field, code: "invalid_parameter_combination", detail }]);
    }
    expect(await countRows(activities, eq(activities.athleteId, p.id))).toBe(0);
    // Equal, one not known, or an average the service derives from distance and time above a
    // maximum the person gave (a treadmill's distance corrected by hand): all taken.
    expect(await record(token, { average_speed_mps: 3.1, max_speed_mps: 3.1, average_heart_rate_hz: 2.5, max_heart_rate_hz: null })).toMatchObject({ max_speed_mps: 3.1 });
    expect(await record(token, { distance_m: 10_000, moving_time_s: 1800, max_speed_mps: 3 })).toMatchObject({ average_speed_mps: 5.556, max_speed_mps: 3 });
  });

  it("refuses a name with a bidi override or a zero-width character (400 naming name, nothing written); an emoji's ZWJ is writing", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const base = { sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };
    for (const name of ["ride\u202etif.exe", "Morning\u200brun", "\u2066Run"]) {
      const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...base, name } });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect((await res.json()).errors).toEqual([expect.objectContaining({ field: "name", code: "invalid_request" })]);
    }
    expect(await countRows(activities, eq(activities.athleteId, p.id))).toBe(0);
    const ok = await record(token, { name: "Løp 🏃\u200d♀️ 🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}" });
    const renamed = await api.call(token, "PATCH", `/v1/activities/${ok.id}`, { body: { name: "x\u202ey" } });
    expect(renamed.status).toBe(400);
    expect((await renamed.json()).errors).toEqual([expect.objectContaining({ field: "name", code: "invalid_request" })]);
    // A name stored before these rules, sent back as it was read, is no change: not refused.
    await (await api.db()).execute(sql`update activities set name = ${"Old\u200bname"} where id = ${ok.id}`);
    const same = await api.call(token, "PATCH", `/v1/activities/${ok.id}`, { body: { name: "Old\u200bname", distance_m: 1000 } });
    expect(same.status).toBe(200);
    expect(await same.json()).toMatchObject({ name: "Old\u200bname", distance_m: 1000 });
  });

  it("refuses to record for anyone else, a coach's member included: 403 and nothing written", async () => {
    const coach = await api.person();
    const member = await api.person();
    await api.team(coach.id, [member.id]);
    const before = { activities: await countRows(activities), events: await countRows(events) };
    for (const [token, target] of [
      [await api.pat(coach.id, ["activities.write"]), member.id],
      [await api.pat(member.id, ["activities.write"]), coach.id],
      [await api.pat(member.id, ["activities.write"]), "ath_doesnotexist"],
    ] as const) {
      const res = await api.call(token, "POST", `/v1/athletes/${target}/activities`, {
        body: { name: "Not mine", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 60 },
      });
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe("athlete_not_reachable");
    }
    expect({ activities: await countRows(activities), events: await countRows(events) }).toEqual(before);
  });
});

describe("PATCH /v1/activities/{activity_id}", () => {
  it("changes only the fields sent, clears a measurement sent as null, and moves updated_at", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const a = await record(token, { distance_m: 5000, average_heart_rate_hz: 2.4, average_power_w: 200 });
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.call(token, "PATCH", `/v1/activities/${a.id}`, {
      body: { name: "Renamed", start_local: "2026-03-02T06:15:00", average_heart_rate_hz: null, distance_m: 5100 },
    });
    expect(res.status).toBe(200);
    const body = Activity.parse(await res.json());
    expect(body).toEqual({
      ...a,
      name: "Renamed",
      start_local: "2026-03-02T06:15:00",
      average_heart_rate_hz: null,
      distance_m: 5100,
      // Derived from distance and time as a create derives it, so it follows the new distance.
      average_speed_mps: Math.round((5100 / 1800) * 1000) / 1000,
      updated_at: body.updated_at,
    });
    expect(Date.parse(body.updated_at)).toBeGreaterThan(Date.parse(a.updated_at));
    expect(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json()).toEqual(body);
  });

  it("derives the average speed again when distance or time changes, and keeps one the change names", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const a = await record(token, { distance_m: 5000, moving_time_s: 1500 });
    expect(a.average_speed_mps).toBe(3.333);
    const patch = async (body: Record<string, unknown>) => Activity.parse(await (await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body })).json());
    expect((await patch({ moving_time_s: 1600 })).average_speed_mps).toBe(3.125);
    // Without a moving time, the elapsed time (1,800 s) is what the speed is over.
    expect((await patch({ moving_time_s: null })).average_speed_mps).toBe(2.778);
    expect((await patch({ distance_m: null })).average_speed_mps).toBeNull();
    expect((await patch({ distance_m: 3600, average_speed_mps: 2.5 })).average_speed_mps).toBe(2.5);
    expect((await patch({ name: "Renamed" })).average_speed_mps).toBe(2.5);
  });

  it("emits exactly one activity.updated event", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write"]);
    const a = await record(token);
    const res = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body: { sport_type: "trail_run" } });
    expect(res.status).toBe(200);
    const db = await api.db();
    const rows = await db.select().from(events).where(eq(events.objectId, a.id));
    expect(rows.map((e) => e.type).sort()).toEqual(["activity.created", "activity.updated"]);
    expect(rows.find((e) => e.type === "activity.updated")).toMatchObject({ athleteId: p.id, objectType: "activity" });
  });

  it("writes nothing and emits nothing for a change that gives every field the value it has", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const a = await record(token, { distance_m: 5000, moving_time_s: 1500, average_heart_rate_hz: 2.4 });
    const fields = Object.fromEntries(Object.keys(UpdateActivityInput.shape).map((k) => [k, a[k as keyof Wire]]));
    // Every field as read, and one named in finer figures than it is stored in (5,000.04 m is 5,000.0 m).
    for (const body of [fields, { distance_m: 5000.04, name: a.name }]) {
      const res = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toEqual(a);
    }
    expect(await countRows(events, and(eq(events.objectId, a.id), eq(events.type, "activity.updated")))).toBe(0);
    // A speed of its own (not the one derived from distance and time) stays when the distance
    // is sent back as it is: nothing changed, so nothing is derived again.
    const own = Activity.parse(await (await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body: { average_speed_mps: 3.5 } })).json());
    const resent = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body: { distance_m: 5000 } });
    expect(await resent.json()).toEqual(own);
    expect(await countRows(events, and(eq(events.objectId, a.id), eq(events.type, "activity.updated")))).toBe(1);
    // One field that differs is a change, and its event.
    const changed = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body: { max_heart_rate_hz: 3 } });
    expect((await changed.json()).max_heart_rate_hz).toBe(3);
    expect(await countRows(events, and(eq(events.objectId, a.id), eq(events.type, "activity.updated")))).toBe(2);
  });

  it("refuses an empty change and a null for a required field with 400, writing nothing", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write"]);
    const a = await record(token);
    const eventsBefore = await countRows(events);
    for (const body of [{}, { name: null }, { elapsed_time_s: null }, { sport_type: null }]) {
      const res = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = await res.json();
      expect(problem.errors?.length).toBeGreaterThan(0);
      if (!Object.keys(body).length) expect(problem.errors).toEqual([{ field: "body", code: "invalid_request", detail: "must name at least one field to change" }]);
    }
    expect(await countRows(events)).toBe(eventsBefore);
  });

  it("refuses a change that leaves moving_time_s longer than elapsed_time_s, the stored value standing for the one not sent: 400 naming the member sent (moving_time_s with both), nothing changed", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const a = await record(token, { elapsed_time_s: 1800, moving_time_s: 1500, distance_m: 5000 });
    const eventsBefore = await countRows(events, eq(events.objectId, a.id));
    const patch = (body: Record<string, unknown>) => api.call(token, "PATCH", `/v1/activities/${a.id}`, { body });
    for (const [body, field, detail] of [
      [{ moving_time_s: 1801 }, "moving_time_s", "moving_time_s must not exceed elapsed_time_s: 1801 s against the activity's 1800 s"],
      [{ elapsed_time_s: 1499 }, "elapsed_time_s", "moving_time_s must not exceed elapsed_time_s: the activity's 1500 s against 1499 s"],
      [{ elapsed_time_s: 2000, moving_time_s: 2001, name: "Both" }, "moving_time_s", "moving_time_s must not exceed elapsed_time_s"],
    ] as const) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = await res.json();
      expect(problem.code).toBe("invalid_parameter_combination");
      expect(problem.errors, JSON.stringify(body)).toEqual([{ field, code: "invalid_parameter_combination", detail }]);
    }
    expect(Activity.parse(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json())).toEqual(a);
    expect(await countRows(events, eq(events.objectId, a.id))).toBe(eventsBefore);

    // What the change leaves is what counts: a longer elapsed time sent with it, a moving time
    // cleared, or one equal to the stored elapsed time.
    const ok = async (body: Record<string, unknown>) => {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      return Activity.parse(await res.json());
    };
    expect(await ok({ elapsed_time_s: 2000, moving_time_s: 1900 })).toMatchObject({ elapsed_time_s: 2000, moving_time_s: 1900 });
    expect(await ok({ moving_time_s: 2000 })).toMatchObject({ elapsed_time_s: 2000, moving_time_s: 2000 });
    expect(await ok({ moving_time_s: null, elapsed_time_s: 600 })).toMatchObject({ elapsed_time_s: 600, moving_time_s: null });
    // An activity whose stored times already disagree (written before this rule) can still be
    // renamed: only a change that names a time is held to it.
    await (await api.db()).update(activities).set({ movingTimeS: 700 }).where(eq(activities.id, a.id));
    expect(await ok({ name: "Renamed" })).toMatchObject({ name: "Renamed", moving_time_s: 700, elapsed_time_s: 600 });
  });

  it("does not let a coach edit a member's activity, and hides it (404) from another athlete", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [member.id]);
    const a = await record(await api.pat(member.id, ["activities.write"]), { name: "Mine" });
    const eventsBefore = await countRows(events, eq(events.objectId, a.id));

    const byCoach = await api.call(await api.pat(coach.id, ["activities.write", "activities.read"]), "PATCH", `/v1/activities/${a.id}`, {
      body: { name: "Coach was here" },
    });
    expect(byCoach.status).toBe(403);
    expect((await byCoach.json()).code).toBe("athlete_not_reachable");

    const byStranger = await api.call(await api.pat(stranger.id, ["activities.write"]), "PATCH", `/v1/activities/${a.id}`, {
      body: { name: "Stranger was here" },
    });
    expect(byStranger.status).toBe(404);
    expect((await byStranger.json()).code).toBe("not_found");

    const unknown = await api.call(await api.pat(stranger.id, ["activities.write"]), "PATCH", `/v1/activities/${newId("act")}`, {
      body: { name: "Nobody's" },
    });
    expect(unknown.status).toBe(404);

    const db = await api.db();
    const [row] = await db.select().from(activities).where(eq(activities.id, a.id));
    expect(row!.name).toBe("Mine");
    expect(await countRows(events, and(eq(events.objectId, a.id), eq(events.type, "activity.updated")))).toBe(0);
    expect(await countRows(events, eq(events.objectId, a.id))).toBe(eventsBefore);
  });

  // PostgreSQL only: the delete's transaction needs a connection of its own, which PGlite's one
  // connection cannot give while the change waits for it.
  it.runIf(process.env.TEST_DATABASE_URL)("a change that finds the activity deleted under it (a concurrent DELETE committed first) is 404, and appends nothing", async () => {
    const p = await api.person();
    const a = await record(await api.pat(p.id));
    const db = await api.db();
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    let deleted!: () => void;
    const holding = new Promise<void>((r) => (deleted = r));
    const deleting = inTransaction(db, async (tx) => {
      await tx.delete(activities).where(eq(activities.id, a.id));
      deleted();
      await committing;
    });
    await holding;
    // The change's locked read of the activity waits on the delete's row lock.
    const changing = inWriteCtx((await api.as(p.id)).ctx, (ctx) => updateActivity({ ctx, activityId: a.id, input: { name: "Renamed" } })).then(
      () => null,
      (e: unknown) => e,
    );
    const waiting = async () =>
      rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_locks where locktype = 'transactionid' and not granted`))[0]!.n;
    for (let i = 0; (await waiting()) === 0; i++) {
      if (i > 1000) throw new Error("the change never waited for the delete");
      await new Promise((r) => setTimeout(r, 10));
    }
    commit();
    await deleting;
    const err = await changing;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: "not_found", status: 404 });
    expect(await countRows(events, and(eq(events.objectId, a.id), eq(events.type, "activity.updated")))).toBe(0);
  });

  // PostgreSQL only, as above. Without the row read under lock, the second change would check
  // against the elapsed time committed before the first, pass, and then write over it.
  it("refuses a change that leaves a maximum below its average, the stored value standing for the one not sent; a derived average is not held to it", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const a = await record(token, { average_speed_mps: 3, max_speed_mps: 4, average_heart_rate_hz: 2.5, max_heart_rate_hz: 3 });
    const patch = (body: Record<string, unknown>) => api.call(token, "PATCH", `/v1/activities/${a.id}`, { body });
    for (const [body, field, detail] of [
      [{ max_speed_mps: 2.9 }, "max_speed_mps", "max_speed_mps must not be below average_speed_mps: the activity's 3 m/s against 2.9 m/s"],
      [{ average_speed_mps: 4.5 }, "average_speed_mps", "max_speed_mps must not be below average_speed_mps: 4.5 m/s against the activity's 4 m/s"],
      [{ max_heart_rate_hz: 2 }, "max_heart_rate_hz", "max_heart_rate_hz must not be below average_heart_rate_hz: the activity's 2.5 Hz against 2 Hz"],
      [{ average_heart_rate_hz: 2.8, max_heart_rate_hz: 2.7 }, "max_heart_rate_hz", "max_heart_rate_hz must not be below average_heart_rate_hz"],
    ] as const) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).errors).toEqual([{ field, code: "invalid_parameter_combination", detail }]);
    }
    expect(Activity.parse(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json())).toEqual(a);
    // The distance corrected by hand derives an average above the device's maximum: taken.
    const res = await patch({ distance_m: 30_000 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ distance_m: 30_000, max_speed_mps: 4 });
    // A maximum sent alone is not held to that derived average either, as a create's is not;
    // an average the change states is held to it.
    const lower = await patch({ max_speed_mps: 3.5 });
    expect(lower.status).toBe(200);
    expect(await lower.json()).toMatchObject({ average_speed_mps: 16.667, max_speed_mps: 3.5 });
    const stated = await patch({ average_speed_mps: 3.6 });
    expect(stated.status).toBe(400);
    expect((await stated.json()).errors).toEqual([
      { field: "average_speed_mps", code: "invalid_parameter_combination", detail: "max_speed_mps must not be below average_speed_mps: 3.6 m/s against the activity's 3.5 m/s" },
    ]);
    // A created average derived from distance and moving time: a maximum below it is taken later
    // as it would have been in the create.
    const b = await record(token, { elapsed_time_s: 1000, moving_time_s: 900, distance_m: 3000, max_speed_mps: 5 });
    expect(b.average_speed_mps).toBe(3.333);
    const later = await api.call(token, "PATCH", `/v1/activities/${b.id}`, { body: { max_speed_mps: 1 } });
    expect(later.status).toBe(200);
    expect(await later.json()).toMatchObject({ average_speed_mps: 3.333, max_speed_mps: 1 });
  });

  it("holds an average speed it derives from distance and time to the 100 m/s any speed may be, naming the member sent; nothing changed", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const base = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00" };
    const created = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...base, elapsed_time_s: 1, distance_m: 1_000_000 } });
    expect(created.status).toBe(400);
    expect(await created.json()).toMatchObject({
      code: "invalid_parameter_combination",
      errors: [{ field: "distance_m", code: "invalid_parameter_combination", detail: "distance_m over elapsed_time_s is 1000000 m/s (1000000 m in 1 s), above the 100 m/s any speed may be" }],
    });
    expect(await countRows(activities, eq(activities.athleteId, p.id))).toBe(0);
    // Exactly 100 m/s is a speed a client may send, so one it may be given.
    expect(await record(token, { elapsed_time_s: 1000, moving_time_s: 100, distance_m: 10_000 })).toMatchObject({ average_speed_mps: 100 });
    const a = await record(token, { elapsed_time_s: 3600, distance_m: 10_000 });
    const eventsBefore = await countRows(events, eq(events.objectId, a.id));
    for (const [body, field] of [
      [{ distance_m: 400_000 }, "distance_m"],
      [{ elapsed_time_s: 99 }, "elapsed_time_s"],
      [{ moving_time_s: 10 }, "moving_time_s"],
    ] as const) {
      const res = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).errors, JSON.stringify(body)).toEqual([expect.objectContaining({ field, code: "invalid_parameter_combination" })]);
    }
    expect(Activity.parse(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json())).toEqual(a);
    expect(await countRows(events, eq(events.objectId, a.id))).toBe(eventsBefore);
  });

  it("answers a creation with Location naming the activity made, on an idempotent replay too", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const body = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 60 };
    const headers = { "Idempotency-Key": `loc-${p.id}` };
    const first = await api.call(token, "POST", "/v1/athletes/me/activities", { body, headers });
    const made = Activity.parse(await first.json());
    expect(first.headers.get("location")).toBe(`/v1/activities/${made.id}`);
    const again = await api.call(token, "POST", "/v1/athletes/me/activities", { body, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(`/v1/activities/${made.id}`);
    expect((await api.call(token, "GET", first.headers.get("location")!)).status).toBe(200);
  });

  it("takes a heart rate from 0.2 to 5 Hz: below, none could be (and the smallest were stored as 0)", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    const base = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 60 };
    for (const value of [0.00001, 0.19, 5.01]) {
      const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...base, average_heart_rate_hz: value } });
      expect(res.status, String(value)).toBe(400);
      expect((await res.json()).errors, String(value)).toEqual([expect.objectContaining({ field: "average_heart_rate_hz" })]);
    }
    expect(await record(token, { average_heart_rate_hz: 0.2, max_heart_rate_hz: 5 })).toMatchObject({ average_heart_rate_hz: 0.2, max_heart_rate_hz: 5 });
  });

  it.runIf(process.env.TEST_DATABASE_URL).each([
    ["someone who cannot see the activity", "not_found"],
    ["the owner's coach, who reads it but may not change it", "athlete_not_reachable"],
  ] as const)("refuses a change by %s at once, without waiting for the owner's lock on it", async (who, code) => {
    const owner = await api.person();
    const stranger = await api.person();
    if (code === "athlete_not_reachable") await api.team(stranger.id, [owner.id]);
    const a = await record(await api.pat(owner.id));
    const db = await api.db();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const owning = inWriteCtx((await api.as(owner.id)).ctx, async (ctx) => {
      await updateActivity({ ctx, activityId: a.id, input: { name: "Held" } });
      held();
      await released;
    });
    await holding;
    try {
      const refused = inWriteCtx((await api.as(stranger.id)).ctx, (ctx) => updateActivity({ ctx, activityId: a.id, input: { name: "Taken" } })).then(
        () => null,
        (e: unknown) => e,
      );
      // Whichever comes first: the stranger's answer, or its statement queued behind the owner's lock.
      let answered = false;
      void refused.then(() => (answered = true));
      const waitingForLock = async (): Promise<"waited for the lock"> => {
        for (;;) {
          const [n] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_locks where locktype = 'transactionid' and not granted`));
          if (n!.n > 0) return "waited for the lock";
          if (answered) return new Promise<never>(() => {});
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      const first = await Promise.race([refused, waitingForLock()]);
      expect(first, who).toBeInstanceOf(ApiError);
      expect(first).toMatchObject({ code });
    } finally {
      release();
      await owning;
    }
    const [row] = await db.select().from(activities).where(eq(activities.id, a.id));
    expect(row!.name).toBe("Held");
  });

  it.runIf(process.env.TEST_DATABASE_URL)("checks moving_time_s against the elapsed time a concurrent change committed first, not the one before it", async () => {
    const p = await api.person();
    const a = await record(await api.pat(p.id), { elapsed_time_s: 1800, moving_time_s: 1500 });
    const db = await api.db();
    const { ctx } = await api.as(p.id);
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    let shortened!: () => void;
    const holding = new Promise<void>((r) => (shortened = r));
    const shortening = inWriteCtx(ctx, async (ctx) => {
      await updateActivity({ ctx, activityId: a.id, input: { elapsed_time_s: 1600 } });
      shortened();
      await committing;
    });
    await holding;
    const lengthening = inWriteCtx(ctx, (ctx) => updateActivity({ ctx, activityId: a.id, input: { moving_time_s: 1700 } })).then(
      () => null,
      (e: unknown) => e,
    );
    const waiting = async () =>
      rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_locks where locktype = 'transactionid' and not granted`))[0]!.n;
    for (let i = 0; (await waiting()) === 0; i++) {
      if (i > 1000) throw new Error("the second change never waited for the first");
      await new Promise((r) => setTimeout(r, 10));
    }
    commit();
    await shortening;
    const err = await lengthening;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: "invalid_parameter_combination", errors: [expect.objectContaining({ field: "moving_time_s" })] });
    const [row] = await db.select().from(activities).where(eq(activities.id, a.id));
    expect(row).toMatchObject({ elapsedTimeS: 1600, movingTimeS: 1500 });
  });
});

/**
 * A value of the field's schema: the `variant`th of two that differ, each inside its bounds and
 * stored exactly (whole numbers, so no measure's rounding moves them), the lower member of an
 * ordered pair never above the upper (ORDERED_PAIRS: the lower's minimum is never above the
 * upper's). A field whose schema says too little to make one (a string that must match a
 * pattern) takes its two from SAMPLES, else the test fails naming it.
 */
const SAMPLES: Partial<Record<string, [unknown, unknown]>> = {
  start_local: ["2026-03-01T07:30:00", "2026-04-02T18:45:30"],
};
function sampleOf(field: string, schema: z.ZodType, variant: 0 | 1): unknown {
  const sample = SAMPLES[field];
  if (sample) return sample[variant];
  type Json = { type?: string; enum?: unknown[]; minimum?: number; maximum?: number; maxLength?: number; pattern?: string; anyOf?: Json[]; $ref?: string; $defs?: Record<string, Json> };
  const root = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;
  let json: Json = root.anyOf?.find((s) => s.type !== "null") ?? root;
  if (json.$ref) json = root.$defs![json.$ref.replace("#/$defs/", "")]!;
  if (json.enum) return json.enum[json.enum.length - 1 - variant];
  if ((json.type === "number" || json.type === "integer") && (json.maximum ?? Infinity) >= Math.ceil(json.minimum ?? 0) + 2) return Math.ceil(json.minimum ?? 0) + 1 + variant;
  if (json.type === "string" && !json.pattern) return `Round trip ${variant}`.slice(0, json.maxLength);
  if (json.type === "boolean") return variant === 0;
  throw new Error(`No sample for ${field} (${JSON.stringify(json)}): add two to SAMPLES`);
}
const samples = (shape: Record<string, z.ZodType>, variant: 0 | 1) => Object.fromEntries(Object.entries(shape).map(([field, schema]) => [field, sampleOf(field, schema, variant)]));

describe("every settable field", () => {
  // From the schemas' own keys, so a field added to either is covered here with no change.
  const created = samples(CreateActivityInput.shape, 0);
  const changed = samples(UpdateActivityInput.shape, 1);

  it("is stored as a create sends it: POST answers it and GET reads it back", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    expect(CreateActivityInput.safeParse(created).success, JSON.stringify(created)).toBe(true);
    const a = await record(token, created);
    const read = Activity.parse(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json());
    for (const [field, value] of Object.entries(created)) {
      expect(a[field as keyof Wire], `POST ${field}`).toEqual(value);
      expect(read[field as keyof Wire], `GET ${field}`).toEqual(value);
    }
  });

  it("is changed as a change sends it: PATCH answers it and GET reads it back", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.read", "activities.write"]);
    expect(UpdateActivityInput.safeParse(changed).success, JSON.stringify(changed)).toBe(true);
    const a = await record(token, created);
    for (const [field, value] of Object.entries(changed)) expect(value, field).not.toEqual(a[field as keyof Wire]);
    const res = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body: changed });
    expect(res.status, await res.clone().text()).toBe(200);
    const answered = Activity.parse(await res.json());
    const read = Activity.parse(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json());
    for (const [field, value] of Object.entries(changed)) {
      expect(answered[field as keyof Wire], `PATCH ${field}`).toEqual(value);
      expect(read[field as keyof Wire], `GET ${field}`).toEqual(value);
    }
    // One field at a time too: each is written alone, not only beside the others.
    for (const [field, value] of Object.entries(created)) {
      const one = await api.call(token, "PATCH", `/v1/activities/${a.id}`, { body: { [field]: value } });
      expect(one.status, `${field}: ${await one.clone().text()}`).toBe(200);
      const after = Activity.parse(await (await api.call(token, "GET", `/v1/activities/${a.id}`)).json());
      expect(after[field as keyof Wire], `PATCH ${field} alone`).toEqual(value);
    }
  });
});

describe("scopes", () => {
  it("reads need activities.read, writes need activities.write: 403 insufficient_scope naming the scope", async () => {
    const p = await api.person();
    const readOnly = await api.pat(p.id, ["activities.read"]);
    const writeOnly = await api.pat(p.id, ["activities.write"]);
    const unrelated = await api.pat(p.id, ["athlete.read", "metrics.read", "metrics.write", "teams.read"]);
    const a = await record(writeOnly);
    const body = { name: "x", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 60 };

    const cases: [string, string, string, unknown, string][] = [
      [readOnly, "POST", "/v1/athletes/me/activities", body, "activities.write"],
      [readOnly, "PATCH", `/v1/activities/${a.id}`, { name: "y" }, "activities.write"],
      [writeOnly, "GET", "/v1/athletes/me/activities", undefined, "activities.read"],
      [writeOnly, "GET", `/v1/activities/${a.id}`, undefined, "activities.read"],
      [unrelated, "GET", "/v1/athletes/me/activities", undefined, "activities.read"],
      [unrelated, "POST", "/v1/athletes/me/activities", body, "activities.write"],
    ];
    const before = await countRows(activities);
    for (const [token, method, path, payload, scope] of cases) {
      const res = await api.call(token, method, path, { body: payload });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
      expect((await res.json()).code).toBe("insufficient_scope");
    }
    expect(await countRows(activities)).toBe(before);

    expect((await api.call(readOnly, "GET", "/v1/athletes/me/activities")).status).toBe(200);
    expect((await api.call(readOnly, "GET", `/v1/activities/${a.id}`)).status).toBe(200);
    expect((await api.call(writeOnly, "PATCH", `/v1/activities/${a.id}`, { body: { name: "y" } })).status).toBe(200);
  });
});
