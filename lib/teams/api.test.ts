import { describe, expect, it } from "vitest";
import { setupApi } from "../testing/fixtures";
import { teamMemberships } from "../db/schema";
import { TeamList, TeamMemberList } from "./schemas";

const api = setupApi();

async function addMember(teamId: string, userId: string, role: "athlete" | "coach" | "admin", status: "active" | "invited" = "active") {
  const db = await api.db();
  await db.insert(teamMemberships).values({ teamId, userId, role, status, joinedAt: status === "active" ? new Date() : null });
}

describe("GET /v1/teams", () => {
  it("lists only the teams the caller coaches or administers, each with the caller's role", async () => {
    const cora = await api.person();
    const ava = await api.person();
    const dan = await api.person();
    const coached = await api.team(cora.id, [ava.id], { name: "Harbor Runners" });
    const administered = await api.team(dan.id, [ava.id], { name: "Hill Club" });
    await addMember(administered, cora.id, "admin");
    const merelyIn = await api.team(dan.id, [cora.id], { name: "Masters Swim" });
    const invitedToCoach = await api.team(dan.id, [], { name: "Track" });
    await addMember(invitedToCoach, cora.id, "coach", "invited");

    const res = await api.call(await api.pat(cora.id, ["teams.read"]), "GET", "/v1/teams");
    expect(res.status).toBe(200);
    const body = TeamList.parse(await res.json());
    expect(body.next_cursor).toBeNull();
    expect(body.data).toHaveLength(2);
    expect(body.data).toEqual(
      expect.arrayContaining([
        { id: coached, name: "Harbor Runners", role: "coach" },
        { id: administered, name: "Hill Club", role: "admin" },
      ]),
    );
    expect(body.data.map((t) => t.id)).not.toContain(merelyIn);

    // An athlete who only belongs to teams discovers none.
    const forAva = TeamList.parse(await (await api.call(await api.pat(ava.id, ["teams.read"]), "GET", "/v1/teams")).json());
    expect(forAva).toEqual({ data: [], next_cursor: null });
  });

  it("pages with next_cursor", async () => {
    const coach = await api.person();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await api.team(coach.id, [], { name: `T${i}` }));
    const token = await api.pat(coach.id, ["teams.read"]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api.call(token, "GET", `/v1/teams?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const page = TeamList.parse(await res.json());
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((t) => t.id));
      cursor = page.next_cursor;
    } while (cursor && seen.length <= made.length);
    expect([...seen].sort()).toEqual([...made].sort());
    expect(new Set(seen).size).toBe(made.length);
  });

  it("refuses a cursor from the members list, or one this API never made, with 400 invalid_cursor", async () => {
    const coach = await api.person();
    const team = await api.team(coach.id, [(await api.person()).id, (await api.person()).id]);
    const token = await api.pat(coach.id, ["teams.read"]);
    const members = (await (await api.call(token, "GET", `/v1/teams/${team}/members?limit=1`)).json()) as { next_cursor: string };
    expect(members.next_cursor).toEqual(expect.any(String));
    const forged = Buffer.from(JSON.stringify(["a"])).toString("base64url");
    for (const cursor of [members.next_cursor, forged]) {
      const res = await api.call(token, "GET", `/v1/teams?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status, cursor).toBe(400);
      expect((await res.json()).code).toBe("invalid_cursor");
    }
    const again = await api.call(token, "GET", `/v1/teams/${team}/members?cursor=${encodeURIComponent(forged)}`);
    expect(again.status).toBe(400);
  });
});

describe("GET /v1/teams/{team_id}/members", () => {
  it("lists the active members only (invited ones are not reachable yet), with role and joined_at", async () => {
    const coach = await api.person({ name: "Cora" });
    const ava = await api.person({ name: "Ava" });
    const dan = await api.person({ name: "Dan" });
    const invited = await api.person({ name: "Ivy" });
    const team = await api.team(coach.id, [ava.id, dan.id]);
    await addMember(team, invited.id, "athlete", "invited");

    const res = await api.call(await api.pat(coach.id, ["teams.read"]), "GET", `/v1/teams/${team}/members`);
    expect(res.status).toBe(200);
    const body = TeamMemberList.parse(await res.json());
    expect(body.next_cursor).toBeNull();
    const byId = new Map(body.data.map((m) => [m.athlete_id, m]));
    expect([...byId.keys()].sort()).toEqual([coach.id, ava.id, dan.id].sort());
    expect(byId.get(ava.id)).toEqual({ athlete_id: ava.id, name: "Ava", role: "athlete", joined_at: expect.stringMatching(/Z$/) });
    expect(byId.get(coach.id)?.role).toBe("coach");
    expect(byId.has(invited.id)).toBe(false);
  });

  it("serves a team admin as well as its coach", async () => {
    const coach = await api.person();
    const admin = await api.person();
    const ava = await api.person();
    const team = await api.team(coach.id, [ava.id]);
    await addMember(team, admin.id, "admin");
    const res = await api.call(await api.pat(admin.id, ["teams.read"]), "GET", `/v1/teams/${team}/members`);
    expect(res.status).toBe(200);
    expect(TeamMemberList.parse(await res.json()).data.map((m) => m.athlete_id)).toContain(ava.id);
  });

  it("refuses a plain member, a stranger, an invited coach and an unknown team with 403 team_not_reachable", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    const invitedCoach = await api.person();
    const team = await api.team(coach.id, [member.id]);
    await addMember(team, invitedCoach.id, "coach", "invited");
    const cases: [string, string][] = [
      [member.id, team],
      [stranger.id, team],
      [invitedCoach.id, team],
      [coach.id, "team_doesnotexist"],
    ];
    for (const [userId, teamId] of cases) {
      const res = await api.call(await api.pat(userId, ["teams.read"]), "GET", `/v1/teams/${teamId}/members`);
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect((await res.json()).code).toBe("team_not_reachable");
    }
  });
});

describe("scopes", () => {
  it("both team endpoints need teams.read", async () => {
    const coach = await api.person();
    const team = await api.team(coach.id, []);
    const token = await api.pat(coach.id, ["athlete.read", "activities.read", "metrics.read"]);
    for (const path of ["/v1/teams", `/v1/teams/${team}/members`]) {
      const res = await api.call(token, "GET", path);
      expect(res.status, path).toBe(403);
      expect(res.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="teams.read"');
      expect((await res.json()).code).toBe("insufficient_scope");
    }
  });
});
