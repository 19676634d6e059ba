import { describe, expect, it } from "vitest";
import { refusal, setupApi } from "../testing/fixtures";
import { addDays, localDateTimeIn, mondayOf } from "../time/local";
import { SummaryQuery, trainingSummary } from "./training-summary";

const api = setupApi();

async function record(pat: string, start_local: string, body: Record<string, unknown> = {}) {
  const res = await api.call(pat, "POST", "/v1/athletes/me/activities", {
    body: { name: "x", sport_type: "run", start_local, elapsed_time_s: 1000, moving_time_s: 900, distance_m: 3000, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

describe("trainingSummary", () => {
  it("groups by the athlete's local weeks, Monday first: a Sunday late evening belongs to the week before", async () => {
    const ava = await api.person({ timezone: "America/Los_Angeles" });
    const pat = await api.pat(ava.id);
    await record(pat, "2026-11-15T23:30:00"); // Sunday
    await record(pat, "2026-11-16T00:10:00"); // Monday
    await record(pat, "2026-11-16T07:00:00", { sport_type: "ride", distance_m: 40000, moving_time_s: null, elapsed_time_s: 5400 });
    const { ctx } = await api.as(ava.id);
    const got = await trainingSummary({ ctx, athleteId: "me", query: SummaryQuery.parse({ start: "2026-11-01", end: "2026-12-01" }) });
    expect(got.periods).toEqual([
      { start: "2026-11-09", sport_type: "run", count: 1, distance_m: 3000, moving_time_s: 900, elevation_gain_m: 0 },
      { start: "2026-11-16", sport_type: "ride", count: 1, distance_m: 40000, moving_time_s: 5400, elevation_gain_m: 0 },
      { start: "2026-11-16", sport_type: "run", count: 1, distance_m: 3000, moving_time_s: 900, elevation_gain_m: 0 },
    ]);
    const months = await trainingSummary({ ctx, athleteId: "me", query: SummaryQuery.parse({ start: "2026-10-01", end: "2027-01-01", group_by: "month" }) });
    expect(months.periods.map((p) => [p.start, p.sport_type, p.count])).toEqual([
      ["2026-11-01", "ride", 1],
      ["2026-11-01", "run", 2],
    ]);
  });

  it("by default covers the current week and the eleven before it, in the athlete's calendar", async () => {
    const ava = await api.person({ timezone: "Pacific/Auckland" });
    const pat = await api.pat(ava.id);
    const today = localDateTimeIn("Pacific/Auckland", new Date()).slice(0, 10);
    await record(pat, `${today}T00:05:00`);
    const old = new Date(`${today}T00:00:00Z`);
    old.setUTCDate(old.getUTCDate() - 7 * 12 - 7);
    await record(pat, `${old.toISOString().slice(0, 10)}T08:00:00`);
    const { ctx } = await api.as(ava.id);
    const got = await trainingSummary({ ctx, athleteId: "me", query: SummaryQuery.parse({}) });
    expect(got.periods).toHaveLength(1);
    const monday = new Date(`${today}T00:00:00Z`);
    monday.setUTCDate(monday.getUTCDate() - ((monday.getUTCDay() + 6) % 7));
    expect(got.periods[0]!.start).toBe(monday.toISOString().slice(0, 10));
  });

  it("runs a range given only its start to today, and one given only its end back over 12 whole periods", async () => {
    const ava = await api.person({ timezone: "UTC" });
    const pat = await api.pat(ava.id);
    const today = localDateTimeIn("UTC", new Date()).slice(0, 10);
    for (const day of [addDays(today, -300), addDays(today, -150), today]) await record(pat, `${day}T07:00:00`);
    const { ctx } = await api.as(ava.id);
    const summary = (query: Record<string, string>) => trainingSummary({ ctx, athleteId: "me", query: SummaryQuery.parse(query) });

    const fromStart = await summary({ start: addDays(today, -300) });
    expect(fromStart.periods.map((p) => p.start)).toEqual([addDays(today, -300), addDays(today, -150), today].map(mondayOf));
    // A start after today is an empty range.
    expect((await summary({ start: addDays(today, 10) })).periods).toEqual([]);

    // The last day included is a Wednesday: its week and the eleven before, each whole.
    const wednesday = addDays(mondayOf(addDays(today, -200)), 2);
    const firstDay = addDays(mondayOf(wednesday), -77);
    await record(pat, `${firstDay}T07:00:00`);
    await record(pat, `${addDays(firstDay, -1)}T07:00:00`);
    const toEnd = await summary({ end: addDays(wednesday, 1) });
    expect(toEnd.periods.map((p) => [p.start, p.count])).toEqual([[firstDay, 1]]);
  });

  it("follows the reach rules and bounds the range", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [member.id]);
    await record(await api.pat(member.id), "2026-11-10T07:00:00");
    const q = SummaryQuery.parse({ start: "2026-11-01", end: "2026-12-01" });
    expect((await trainingSummary({ ctx: (await api.as(coach.id)).ctx, athleteId: member.id, query: q })).periods).toHaveLength(1);
    expect((await refusal(trainingSummary({ ctx: (await api.as(stranger.id)).ctx, athleteId: member.id, query: q }))).code).toBe("athlete_not_reachable");
    // The same date at both ends is an empty range, as the activity list answers it; end before start is refused.
    const empty = SummaryQuery.parse({ start: "2026-11-10", end: "2026-11-10" });
    expect((await trainingSummary({ ctx: (await api.as(coach.id)).ctx, athleteId: member.id, query: empty })).periods).toEqual([]);
    expect(SummaryQuery.safeParse({ start: "2026-11-10", end: "2026-11-09" }).error?.issues[0]).toMatchObject({ params: { code: "invalid_parameter_combination" } });
    const long = SummaryQuery.parse({ start: "2020-01-01", end: "2026-01-01" });
    expect((await refusal(trainingSummary({ ctx: (await api.as(coach.id)).ctx, athleteId: "me", query: long }))).code).toBe("invalid_parameter_combination");
    expect(SummaryQuery.safeParse({ start: "2026-11-02", end: "2026-11-01" }).success).toBe(false);
  });
});
