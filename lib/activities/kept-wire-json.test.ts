import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { rowsOf } from "../db/client";
import { activities } from "../db/schema";
import { Activity, ActivityList } from "./schemas";
import { activityWireJsonOf } from "./kept-wire-json";

const api = setupApi();

async function record(token: string, name: string): Promise<string> {
  const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
    body: { name, sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return Activity.parse(await res.json()).id;
}

async function names(token: string): Promise<string[]> {
  const res = await api.call(token, "GET", "/v1/athletes/me/activities");
  expect(res.status).toBe(200);
  return ActivityList.parse(await res.json()).data.map((a) => a.name);
}

/** The activity as GET /v1/activities/{id} answers it, or its status when that is not 200. */
async function fetched(token: string, id: string): Promise<string | number> {
  const res = await api.call(token, "GET", `/v1/activities/${id}`);
  return res.status === 200 ? Activity.parse(await res.json()).name : res.status;
}

async function versionOf(id: string): Promise<string> {
  const [row] = rowsOf<{ v: string }>(await (await api.db()).execute(sql`select xmin::text as v from activities where id = ${id}`));
  return row!.v;
}

describe("the activity JSON a list keeps", () => {
  it("never outlives a change: an activity changed by the API or by anything else is listed as it is now", async () => {
    const ava = await api.person();
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    const id = await record(token, "Before");
    expect(await names(token)).toEqual(["Before"]);
    expect((await api.call(token, "PATCH", `/v1/activities/${id}`, { body: { name: "Renamed" } })).status).toBe(200);
    expect(await names(token)).toEqual(["Renamed"]);
    // A write that bypasses the service (a migration, an operator) changes the row version all the same.
    await (await api.db()).update(activities).set({ name: "By hand" }).where(eq(activities.id, id));
    expect(await names(token)).toEqual(["By hand"]);
    expect((await api.call(token, "DELETE", `/v1/activities/${id}`)).status).toBe(204);
    expect(await names(token)).toEqual([]);
  });

  it("is what GET /v1/activities/{id} answers too: never older than the row, for the owner and a coach, and 404 once deleted", async () => {
    const ava = await api.person();
    const coach = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [ava.id]);
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    const coachToken = await api.pat(coach.id, ["activities.read"]);
    const strangerToken = await api.pat(stranger.id, ["activities.read"]);
    const id = await record(token, "Before");
    expect(await fetched(token, id)).toBe("Before");
    expect(await fetched(coachToken, id)).toBe("Before");
    expect(await fetched(strangerToken, id)).toBe(404);
    // The single read and the list give the same bytes for the same row.
    const single = await (await api.call(token, "GET", `/v1/activities/${id}`)).json();
    const listed = ((await (await api.call(token, "GET", "/v1/athletes/me/activities")).json()) as { data: unknown[] }).data[0];
    expect(single).toEqual(listed);
    expect((await api.call(token, "PATCH", `/v1/activities/${id}`, { body: { name: "Renamed" } })).status).toBe(200);
    expect(await fetched(token, id)).toBe("Renamed");
    await (await api.db()).update(activities).set({ name: "By hand" }).where(eq(activities.id, id));
    expect(await fetched(token, id)).toBe("By hand");
    expect(await fetched(coachToken, id)).toBe("By hand");
    expect((await api.call(token, "DELETE", `/v1/activities/${id}`)).status).toBe(204);
    expect(await fetched(token, id)).toBe(404);
  });

  it("answers a version it has kept without building it again, and builds a version it has not seen", async () => {
    const ava = await api.person();
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    const id = await record(token, "Kept");
    const db = await api.db();
    const first = await versionOf(id);
    const [kept] = await activityWireJsonOf(db, [{ id, version: first }]);
    expect(JSON.parse(kept!).name).toBe("Kept");
    await db.update(activities).set({ name: "Changed" }).where(eq(activities.id, id));
    const second = await versionOf(id);
    expect(second).not.toBe(first);
    // Asked for the version it keeps, it answers from what it kept: nothing was read.
    expect(await activityWireJsonOf(db, [{ id, version: first }])).toEqual([kept]);
    // Asked for the new one, it builds it.
    const [built] = await activityWireJsonOf(db, [{ id, version: second }]);
    expect(JSON.parse(built!).name).toBe("Changed");
  });

  it("leaves out an activity deleted between the page's read and its JSON's, and keeps the others' order", async () => {
    const ava = await api.person();
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    const a = await record(token, "A");
    const b = await record(token, "B");
    const c = await record(token, "C");
    const db = await api.db();
    const rows = [
      { id: c, version: await versionOf(c) },
      { id: b, version: await versionOf(b) },
      { id: a, version: await versionOf(a) },
    ];
    await db.delete(activities).where(eq(activities.id, b));
    const json = await activityWireJsonOf(db, rows);
    expect(json.map((j) => (JSON.parse(j) as { name: string }).name)).toEqual(["C", "A"]);
  });
});
