import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { canReach } from "../athletes/reach";
import { sessionCookieFor } from "../auth/test-session";
import { refusal, setupApi } from "../testing/fixtures";
import { InviteAthleteInput } from "./console-schemas";
import { createTeam } from "./create-team";
import { inviteAthlete, MAX_PENDING_FROM_ONE_INVITER } from "./invite-athlete";
import { listCoachedTeams } from "./list-coached-teams";
import { listMyMemberships } from "./list-my-memberships";
import { respondToInvitation } from "./respond-to-invitation";
import { inWriteCtx, type WriteCtx } from "../http/operation";
import { teamMemberships } from "../db/schema";
import { ApiError } from "../http/errors";
import { deleteTeam, leaveTeam } from "./end-membership";
import { sql } from "drizzle-orm";
import { rowsOf } from "../db/client";

const api = setupApi();

/** A write verb called as the signed-in person, in a transaction of its own (as the console's wrapper runs it). */
async function writeAs<T>(userId: string, verb: (ctx: WriteCtx) => Promise<T>): Promise<T> {
  return inWriteCtx({ db: await api.db(), actor: { kind: "session", userId } }, verb);
}

describe("createTeam", () => {
  it("makes its creator the team's active coach", async () => {
    const coach = await api.person({ name: "Cora" });
    const team = await writeAs(coach.id, (ctx) => createTeam({ ctx, input: { name: "Harbor Runners" } }));
    expect(team).toMatchObject({ name: "Harbor Runners", role: "coach" });
    expect(team.id).toMatch(/^team_/);

    const teams = await listCoachedTeams(await api.as(coach.id));
    expect(teams).toEqual([
      {
        id: team.id,
        name: "Harbor Runners",
        role: "coach",
        members: [expect.objectContaining({ athlete_id: coach.id, name: "Cora", role: "coach", status: "active" })],
      },
    ]);
    expect((await listMyMemberships(await api.as(coach.id))).teams).toEqual([
      expect.objectContaining({ team_id: team.id, team_name: "Harbor Runners", role: "coach", can_leave: false }),
    ]);
  });
});

describe("inviteAthlete", () => {
  it("invites an existing account by email, case-insensitively, as an invited athlete", async () => {
    const coach = await api.person({ name: "Cora" });
    const athlete = await api.person();
    const team = await writeAs(coach.id, (ctx) => createTeam({ ctx, input: { name: "Squad" } }));
    const entry = await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: team.id, input: InviteAthleteInput.parse({ email: athlete.email.toUpperCase() }) }));
    expect(entry).toEqual({
      athlete_id: null,
      name: null,
      email: athlete.email,
      role: "athlete",
      status: "invited",
      invited_at: expect.any(String),
      joined_at: null,
    });

    const [listed] = await listCoachedTeams(await api.as(coach.id));
    expect(listed!.members.map((m) => [m.athlete_id, m.email, m.status])).toEqual([
      [coach.id, coach.email, "active"],
      [null, athlete.email, "invited"],
    ]);
    expect((await listMyMemberships(await api.as(athlete.id))).invitations).toEqual([
      { team_id: team.id, team_name: "Squad", role: "athlete", invited_by: "Cora", invited_by_email: coach.email, invited_at: entry.invited_at },
    ]);
  });

  it("refuses an email with no account: 404 with a field error on email", async () => {
    const coach = await api.person();
    const team = await writeAs(coach.id, (ctx) => createTeam({ ctx, input: { name: "Squad" } }));
    const err = await refusal(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: team.id, input: { email: "nobody@example.test" } })));
    expect(err.code).toBe("not_found");
    expect(err.message).toContain("No account uses nobody@example.test");
    expect(err.errors).toEqual([expect.objectContaining({ field: "email", code: "not_found" })]);
  });

  it("refuses someone already invited, or already a member, with 409 conflict", async () => {
    const coach = await api.person();
    const invited = await api.person();
    const member = await api.person();
    const teamId = await api.team(coach.id, [member.id]);
    await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: invited.email } }));

    const again = await refusal(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: invited.email } })));
    expect(again.code).toBe("conflict");
    expect(again.message).toContain("already invited");

    const joined = await refusal(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: member.email } })));
    expect(joined.code).toBe("conflict");
    expect(joined.message).toContain("already a member");

    const self = await refusal(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: coach.email } })));
    expect(self.code).toBe("conflict");
  });

  it("lets only an active coach or admin of the team invite: 403 team_not_reachable otherwise", async () => {
    const coach = await api.person();
    const member = await api.person();
    const stranger = await api.person();
    const target = await api.person();
    const teamId = await api.team(coach.id, [member.id]);
    for (const who of [member.id, stranger.id]) {
      const err = await refusal(writeAs(who, (ctx) => inviteAthlete({ ctx, teamId, input: { email: target.email } })));
      expect(err.code).toBe("team_not_reachable");
    }
    const unknown = await refusal(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: "team_nope", input: { email: target.email } })));
    expect(unknown.code).toBe("team_not_reachable");
    expect((await listMyMemberships(await api.as(target.id))).invitations).toEqual([]);
  });
});

describe("inviteAthlete: a bound on one inviter's unanswered invitations to one person", () => {
  it(`refuses the ${MAX_PENDING_FROM_ONE_INVITER + 1}th with 409 on the email field; an answer or a withdrawal makes room`, async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teams: string[] = [];
    for (let i = 0; i <= MAX_PENDING_FROM_ONE_INVITER; i++) teams.push((await writeAs(coach.id, (ctx) => createTeam({ ctx, input: { name: `Team ${i}` } }))).id);
    for (const teamId of teams.slice(0, MAX_PENDING_FROM_ONE_INVITER)) {
      await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: athlete.email } }));
    }
    const last = teams.at(-1)!;
    const err = await refusal(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: last, input: { email: athlete.email } })));
    expect(err.code).toBe("conflict");
    expect(err.errors).toEqual([expect.objectContaining({ field: "email", code: "conflict" })]);
    expect((await listMyMemberships(await api.as(athlete.id))).invitations).toHaveLength(MAX_PENDING_FROM_ONE_INVITER);
    // Another coach is not held back by this one's invitations.
    const other = await api.person();
    const otherTeam = await writeAs(other.id, (ctx) => createTeam({ ctx, input: { name: "Other" } }));
    await expect(writeAs(other.id, (ctx) => inviteAthlete({ ctx, teamId: otherTeam.id, input: { email: athlete.email } }))).resolves.toMatchObject({ status: "invited" });
    // Declining one makes room for the next.
    await writeAs(athlete.id, (ctx) => respondToInvitation({ ctx, teamId: teams[0]!, answer: "decline" }));
    await expect(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: last, input: { email: athlete.email } }))).resolves.toMatchObject({ status: "invited" });
  });
});

describe("respondToInvitation", () => {
  it("accepting makes the athlete reachable by the team's coach; until then they are not", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const team = await writeAs(coach.id, (ctx) => createTeam({ ctx, input: { name: "Squad" } }));
    await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: team.id, input: { email: athlete.email } }));
    const db = await api.db();
    expect(await canReach(db, coach.id, athlete.id)).toBe(false);

    const joined = await writeAs(athlete.id, (ctx) => respondToInvitation({ ctx, teamId: team.id, answer: "accept" }));
    expect(joined).toMatchObject({ team_id: team.id, team_name: "Squad", role: "athlete" });
    expect(joined!.joined_at).not.toBeNull();
    expect(await canReach(db, coach.id, athlete.id)).toBe(true);
    // Membership is one-way: the athlete does not reach the coach.
    expect(await canReach(db, athlete.id, coach.id)).toBe(false);

    const mine = await listMyMemberships(await api.as(athlete.id));
    expect(mine.invitations).toEqual([]);
    expect(mine.teams).toEqual([expect.objectContaining({ team_id: team.id, role: "athlete", can_leave: true })]);
    const [listed] = await listCoachedTeams(await api.as(coach.id));
    expect(listed!.members.find((m) => m.athlete_id === athlete.id)).toMatchObject({ status: "active", email: athlete.email, name: expect.any(String) });
  });

  it("declining deletes the invitation, so the coach never reaches them and may invite again", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { memberStatus: "invited" });
    expect(await writeAs(athlete.id, (ctx) => respondToInvitation({ ctx, teamId, answer: "decline" }))).toBeNull();

    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(false);
    expect(await listMyMemberships(await api.as(athlete.id))).toEqual({ invitations: [], teams: [] });
    const [listed] = await listCoachedTeams(await api.as(coach.id));
    expect(listed!.members.map((m) => m.athlete_id)).toEqual([coach.id]);
    await expect(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: athlete.email } }))).resolves.toMatchObject({
      status: "invited",
    });
  });

  it("answers 404 when there is no pending invitation: none, someone else's, or already accepted", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const other = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { memberStatus: "invited" });
    for (const answer of ["accept", "decline"] as const) {
      expect((await refusal(writeAs(other.id, (ctx) => respondToInvitation({ ctx, teamId, answer })))).code).toBe("not_found");
    }
    await writeAs(athlete.id, (ctx) => respondToInvitation({ ctx, teamId, answer: "accept" }));
    for (const answer of ["accept", "decline"] as const) {
      expect((await refusal(writeAs(athlete.id, (ctx) => respondToInvitation({ ctx, teamId, answer })))).code).toBe("not_found");
    }
    // Declining answers an invitation; it does not end a membership.
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(true);
  });
});

/** A console API call as `userId`, signed in (a same-origin write, as the console's pages make it). */
async function signedInCall(userId: string, method: string, path: string, body?: unknown) {
  return fetch(api.url + path, {
    method,
    headers: {
      cookie: await sessionCookieFor(userId),
      ...(method === "GET" ? {} : { origin: api.url }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe("an invitation over HTTP: the coach sees the email they typed and the status, nothing more, until it is accepted", () => {
  const consoleCall = signedInCall;

  it("hides the invitee's id and name in the invite answer, the console roster and /v1 members, and shows them once accepted", async () => {
    const coach = await api.person({ name: "Cora Coach" });
    const athlete = await api.person({ name: "Secret Name" });
    const team = (await (await consoleCall(coach.id, "POST", "/api/console/teams", { name: "Harbor" })).json()) as { id: string };

    const invited = await consoleCall(coach.id, "POST", `/api/console/teams/${team.id}/invitations`, { email: athlete.email.toUpperCase() });
    expect(invited.status).toBe(201);
    const invitedText = await invited.text();
    expect(JSON.parse(invitedText)).toMatchObject({ athlete_id: null, name: null, email: athlete.email, status: "invited" });
    expect(invitedText).not.toContain(athlete.id);
    expect(invitedText).not.toContain("Secret Name");

    const rosterText = await (await consoleCall(coach.id, "GET", "/api/console/teams")).text();
    expect(rosterText).not.toContain(athlete.id);
    expect(rosterText).not.toContain("Secret Name");
    const [roster] = JSON.parse(rosterText) as { members: { athlete_id: string | null; email: string; status: string }[] }[];
    expect(roster!.members).toContainEqual(expect.objectContaining({ athlete_id: null, name: null, email: athlete.email, status: "invited" }));

    const pat = await api.pat(coach.id, ["teams.read"]);
    const membersText = await (await api.call(pat, "GET", `/v1/teams/${team.id}/members`)).text();
    expect(membersText).not.toContain(athlete.id);
    expect(membersText).not.toContain("Secret Name");

    expect((await consoleCall(athlete.id, "POST", `/api/console/invitations/${team.id}`)).status).toBe(200);

    const after = (await (await consoleCall(coach.id, "GET", "/api/console/teams")).json()) as { members: unknown[] }[];
    expect(after[0]!.members).toContainEqual(
      expect.objectContaining({ athlete_id: athlete.id, name: "Secret Name", email: athlete.email, status: "active" }),
    );
    const members = (await (await api.call(pat, "GET", `/v1/teams/${team.id}/members`)).json()) as { data: unknown[] };
    expect(members.data).toContainEqual(expect.objectContaining({ athlete_id: athlete.id, name: "Secret Name", role: "athlete" }));
  });
});

/** A console request as the signed-in person, over HTTP (same-origin for writes, as the console sends them). */
async function asPerson(userId: string, method: string, path: string) {
  return fetch(api.url + path, { method, headers: { cookie: await sessionCookieFor(userId), ...(method === "GET" ? {} : { origin: api.url }) } });
}

describe("ending a membership: an athlete leaves, a coach removes an athlete or withdraws an invitation", () => {
  it("an athlete who leaves is out of reach at once, for the coach's token issued before", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { name: "Harbor" });
    const pat = await api.pat(coach.id, ["athlete.read", "activities.read", "teams.read"]);
    expect((await api.call(pat, "GET", `/v1/athletes/${athlete.id}`)).status).toBe(200);

    const left = await asPerson(athlete.id, "DELETE", `/api/console/memberships/${teamId}`);
    expect(left.status, await left.clone().text()).toBe(200);
    expect(await left.json()).toBeNull();
    expect((await api.call(pat, "GET", `/v1/athletes/${athlete.id}`)).status).toBe(403);
    expect((await api.call(pat, "GET", `/v1/athletes/${athlete.id}/activities`)).status).toBe(403);
    const members = (await (await api.call(pat, "GET", `/v1/teams/${teamId}/members`)).json()) as { data: { athlete_id: string }[] };
    expect(members.data.map((m) => m.athlete_id)).toEqual([coach.id]);
    expect(await listMyMemberships(await api.as(athlete.id))).toEqual({ invitations: [], teams: [] });
    // Gone is gone: a second leave, and one from a team they never joined, are 404s.
    expect((await asPerson(athlete.id, "DELETE", `/api/console/memberships/${teamId}`)).status).toBe(404);
    expect((await asPerson(athlete.id, "DELETE", "/api/console/memberships/team_nonexistent")).status).toBe(404);
    // And they can be invited again.
    await expect(writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: athlete.email } }))).resolves.toMatchObject({ status: "invited" });
  });

  it("an id that cannot be one of the API's (a NUL, too long) is answered as an unknown one: 404 for the athlete's own memberships and invitations and a coach's member, 403 for a team the coach would act on", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id]);
    const long = "team_" + "x".repeat(100);
    for (const bad of ["%00", long]) {
      for (const [method, path] of [
        ["DELETE", `/api/console/memberships/${bad}`],
        ["POST", `/api/console/invitations/${bad}`],
        ["DELETE", `/api/console/invitations/${bad}`],
      ] as const) {
        const res = await asPerson(athlete.id, method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.json(), `${method} ${path}`).toMatchObject({ code: "not_found" });
      }
      const member = await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}/members/${bad}`);
      expect(member.status, bad).toBe(404);
      for (const [method, path] of [
        ["POST", `/api/console/teams/${bad}/invitations`],
        ["DELETE", `/api/console/teams/${bad}/members/${athlete.id}`],
        ["DELETE", `/api/console/teams/${bad}/invitations/a%40example.com`],
      ] as const) {
        const res = await asPerson(coach.id, method, path);
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(await res.json(), `${method} ${path}`).toMatchObject({ code: "team_not_reachable" });
      }
    }
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(true);
  });

  it("a pending invitation is not left but declined; a cross-site leave is refused", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { memberStatus: "invited" });
    expect((await asPerson(athlete.id, "DELETE", `/api/console/memberships/${teamId}`)).status).toBe(404);
    expect((await listMyMemberships(await api.as(athlete.id))).invitations).toHaveLength(1);

    const joined = await api.team(coach.id, [athlete.id]);
    const crossSite = await fetch(`${api.url}/api/console/memberships/${joined}`, {
      method: "DELETE",
      headers: { cookie: await sessionCookieFor(athlete.id), origin: "https://evil.example" },
    });
    expect(crossSite.status).toBe(400);
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(true);
  });

  it("the only coach cannot leave (409); with a second coach one can, and is then out of the team's roster", async () => {
    const coach = await api.person();
    const second = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { name: "Harbor" });
    const only = await asPerson(coach.id, "DELETE", `/api/console/memberships/${teamId}`);
    expect(only.status).toBe(409);
    expect((await only.json()).detail).toBe("You are the only coach of Harbor: a team needs one. Delete the team instead, if it is done with.");
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(true);

    await (await api.db()).insert(teamMemberships).values({ teamId, userId: second.id, role: "coach", status: "active", joinedAt: new Date() });
    // Both at once: one leaves, the other is then the only one and stays.
    const answers = await Promise.all([coach, second].map((c) => asPerson(c.id, "DELETE", `/api/console/memberships/${teamId}`)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const stayed = answers[0]!.status === 409 ? coach : second;
    const [roster] = await listCoachedTeams(await api.as(stayed.id));
    expect(roster!.members.map((m) => m.athlete_id).sort()).toEqual([athlete.id, stayed.id].sort());
  });

  it("two coaches leaving at once, again and again: one leaves and the other stays, never a deadlock", async () => {
    for (let i = 0; i < 20; i++) {
      const [a, b] = [await api.person(), await api.person()];
      const teamId = await api.team(a.id, []);
      await (await api.db()).insert(teamMemberships).values({ teamId, userId: b.id, role: "coach", status: "active", joinedAt: new Date() });
      const outcomes = await Promise.allSettled([a, b].map((c) => writeAs(c.id, (ctx) => leaveTeam({ ctx, teamId }))));
      const codes = outcomes.map((o) => (o.status === "fulfilled" ? "left" : o.reason instanceof ApiError ? o.reason.code : String(o.reason)));
      expect(codes.sort(), `round ${i}`).toEqual(["conflict", "left"]);
    }
  });

  it("a coach removes an athlete and withdraws an invitation; others cannot, and coaches are not removed", async () => {
    const coach = await api.person();
    const second = await api.person();
    const athlete = await api.person();
    const invitee = await api.person();
    const stranger = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { name: "Harbor" });
    await (await api.db()).insert(teamMemberships).values({ teamId, userId: second.id, role: "coach", status: "active", joinedAt: new Date() });
    await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: { email: invitee.email } }));

    // Neither the athlete nor a stranger may take anyone off.
    for (const who of [athlete, stranger]) {
      const res = await asPerson(who.id, "DELETE", `/api/console/teams/${teamId}/members/${athlete.id}`);
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe("team_not_reachable");
    }
    const coachOff = await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}/members/${second.id}`);
    expect(coachOff.status).toBe(409);
    expect((await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}/members/${stranger.id}`)).status).toBe(404);
    // An invitation is withdrawn by its email, in any case; it does not remove a member by theirs.
    expect((await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}/invitations/${encodeURIComponent(athlete.email)}`)).status).toBe(404);
    const withdrawn = await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}/invitations/${encodeURIComponent(invitee.email.toUpperCase())}`);
    expect(withdrawn.status, await withdrawn.clone().text()).toBe(200);
    expect((await listMyMemberships(await api.as(invitee.id))).invitations).toEqual([]);

    const removed = await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}/members/${athlete.id}`);
    expect(removed.status, await removed.clone().text()).toBe(200);
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(false);
    expect(await canReach(await api.db(), second.id, athlete.id)).toBe(false);
    expect((await listMyMemberships(await api.as(athlete.id))).teams).toEqual([]);
    const [roster] = await listCoachedTeams(await api.as(coach.id));
    expect(roster!.members.map((m) => m.athlete_id).sort()).toEqual([coach.id, second.id].sort());
  });
});

describe("who sent an invitation: the invitee sees the inviter's account email, which a look-alike cannot copy", () => {
  async function consoleCall(userId: string, method: string, path: string, body?: unknown) {
    const res = await signedInCall(userId, method, path, body);
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    return res.json();
  }

  it("a stranger who takes a coach's name and team name still sends an invitation that reads as theirs", async () => {
    const cora = await api.person({ name: "Cora Haines" });
    const eve = await api.person({ name: "Eve" });
    const ava = await api.person({ name: "Ava" });
    for (const [inviter, rename] of [
      [cora, false],
      [eve, true],
    ] as const) {
      if (rename) await consoleCall(inviter.id, "PATCH", "/api/console/profile", { name: "Cora Haines" });
      const team = (await consoleCall(inviter.id, "POST", "/api/console/teams", { name: "Harbor Runners" })) as { id: string };
      await consoleCall(inviter.id, "POST", `/api/console/teams/${team.id}/invitations`, { email: ava.email });
    }

    const mine = (await consoleCall(ava.id, "GET", "/api/console/memberships")) as { invitations: Record<string, unknown>[] };
    // Same name, same team name: only the email tells them apart, and it is each sender's own.
    expect(mine.invitations.map((i) => [i.team_name, i.invited_by, i.invited_by_email]).sort()).toEqual(
      [
        ["Harbor Runners", "Cora Haines", cora.email],
        ["Harbor Runners", "Cora Haines", eve.email],
      ].sort(),
    );
  });

  it("an invitation whose sender's account is gone names nobody", async () => {
    const coach = await api.person({ name: "Cora" });
    const athlete = await api.person();
    const team = await writeAs(coach.id, (ctx) => createTeam({ ctx, input: { name: "Squad" } }));
    await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId: team.id, input: { email: athlete.email } }));
    await (await api.db()).update(teamMemberships).set({ invitedBy: null }).where(eq(teamMemberships.userId, athlete.id));
    expect((await listMyMemberships(await api.as(athlete.id))).invitations).toEqual([
      expect.objectContaining({ team_id: team.id, invited_by: null, invited_by_email: null }),
    ]);
  });
});

describe("whether the person may leave a team: what leaving would answer, so the page offers only a Leave that works", () => {
  it("an athlete may; a team's only coach may not (and leaving is indeed refused); with a second coach each may, until one leaves", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { name: "Harbor" });
    const canLeave = async (userId: string) => (await listMyMemberships(await api.as(userId))).teams.map((t) => [t.team_id, t.can_leave]);

    expect(await canLeave(athlete.id)).toEqual([[teamId, true]]);
    expect(await canLeave(coach.id)).toEqual([[teamId, false]]);
    expect((await refusal(writeAs(coach.id, (ctx) => leaveTeam({ ctx, teamId })))).code).toBe("conflict");

    const second = await api.person();
    await (await api.db()).insert(teamMemberships).values({ teamId, userId: second.id, role: "admin", status: "active", joinedAt: new Date() });
    expect(await canLeave(coach.id)).toEqual([[teamId, true]]);
    expect(await canLeave(second.id)).toEqual([[teamId, true]]);
    // An invited coach does not run the team yet, so it does not count.
    const invited = await api.person();
    await (await api.db()).insert(teamMemberships).values({ teamId, userId: invited.id, role: "coach", status: "invited" });

    await writeAs(second.id, (ctx) => leaveTeam({ ctx, teamId }));
    expect(await canLeave(coach.id)).toEqual([[teamId, false]]);
    expect(await canLeave(athlete.id)).toEqual([[teamId, true]]);
  });

  it("is said per team: coaching one team alone does not keep the person in another", async () => {
    const person = await api.person();
    const other = await api.person();
    const own = await api.team(person.id, [], { name: "A own" });
    const joined = await api.team(other.id, [person.id], { name: "B joined" });
    const teams = (await listMyMemberships(await api.as(person.id))).teams;
    expect(teams.map((t) => [t.team_id, t.role, t.can_leave])).toEqual([
      [own, "coach", false],
      [joined, "athlete", true],
    ]);
  });
});

describe("a team's name", () => {
  it("refuses control, bidi and zero-width characters with 400 on the name field, creating nothing", async () => {
    const coach = await api.person();
    for (const name of ["Harbor\u202eRunners", "Harbor\u200bRunners", "Harbor\u0007"]) {
      const res = await fetch(`${api.url}/api/console/teams`, {
        method: "POST",
        headers: { cookie: await sessionCookieFor(coach.id), origin: api.url, "content-type": "application/json" },
        body: JSON.stringify({ name }),
      });
      expect(res.status, name).toBe(400);
      expect((await res.json()).errors).toEqual([expect.objectContaining({ field: "name" })]);
    }
    expect(await listCoachedTeams(await api.as(coach.id))).toEqual([]);
  });
});

describe("a coach's view of a team member's activities (GET /api/console/athletes/{athlete_id}/activities)", () => {
  it("lists an active member's activities as /v1 does for their coach; nobody else, and no one once they left", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const stranger = await api.person();
    const teamId = await api.team(coach.id, [athlete.id]);
    const own = await api.pat(athlete.id);
    for (const [i, start] of ["2026-10-05T07:00:00", "2026-10-07T07:00:00"].entries()) {
      const res = await api.call(own, "POST", "/v1/athletes/me/activities", {
        body: { name: `Run ${i}`, sport_type: "run", start_local: start, elapsed_time_s: 3600, moving_time_s: 3500, distance_m: 10_000 },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const path = `/api/console/athletes/${athlete.id}/activities`;
    const first = await asPerson(coach.id, "GET", `${path}?limit=1`);
    expect(first.status, await first.clone().text()).toBe(200);
    const page = (await first.json()) as { data: { name: string }[]; next_cursor: string | null };
    const v1 = await api.call(await api.pat(coach.id, ["activities.read"]), "GET", `/v1/athletes/${athlete.id}/activities?limit=1`);
    expect(page).toEqual(await v1.json());
    expect(page.data.map((a) => a.name)).toEqual(["Run 1"]);
    const rest = (await (await asPerson(coach.id, "GET", `${path}?cursor=${encodeURIComponent(page.next_cursor!)}`)).json()) as typeof page;
    expect(rest.data.map((a) => a.name)).toEqual(["Run 0"]);

    // Someone on none of the athlete's teams is refused as /v1 refuses them.
    expect((await asPerson(stranger.id, "GET", path)).status).toBe(403);
    // Invalid input is the usual 400; an id no athlete can have is refused as one not reached,
    // as /v1 refuses it (ids cannot be probed, SPEC §4.1).
    expect((await asPerson(coach.id, "GET", `${path}?limit=0`)).status).toBe(400);
    const long = await asPerson(coach.id, "GET", `/api/console/athletes/${"a".repeat(65)}/activities`);
    const v1Long = await api.call(await api.pat(coach.id, ["activities.read"]), "GET", `/v1/athletes/${"a".repeat(65)}/activities`);
    expect([long.status, ((await long.json()) as { code: string }).code]).toEqual([403, "athlete_not_reachable"]);
    expect(v1Long.status).toBe(403);
    // Once the athlete leaves, the coach no longer sees their list.
    expect((await asPerson(athlete.id, "DELETE", `/api/console/memberships/${teamId}`)).status).toBe(200);
    expect((await asPerson(coach.id, "GET", path)).status).toBe(403);
  });
});

describe("deleting a team (DELETE /api/console/teams/{team_id})", () => {
  it("ends every membership and invitation at once, for tokens issued before; the athletes keep their data; only its coach may", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const invited = await api.person();
    const teamId = await api.team(coach.id, [athlete.id], { name: "Done with" });
    await writeAs(coach.id, (ctx) => inviteAthlete({ ctx, teamId, input: InviteAthleteInput.parse({ email: invited.email }) }));
    const activity = await api.call(await api.pat(athlete.id, ["activities.write"]), "POST", "/v1/athletes/me/activities", {
      body: { name: "Mine", sport_type: "run", start_local: "2026-03-01T07:00:00", elapsed_time_s: 600 },
    });
    expect(activity.status).toBe(201);
    const pat = await api.pat(coach.id, ["athlete.read", "teams.read"]);
    expect((await api.call(pat, "GET", `/v1/athletes/${athlete.id}`)).status).toBe(200);

    // The athlete is no coach of it: refused, and nothing changes.
    const refused = await asPerson(athlete.id, "DELETE", `/api/console/teams/${teamId}`);
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe("team_not_reachable");
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(true);

    const deleted = await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toBeNull();
    expect((await api.call(pat, "GET", `/v1/athletes/${athlete.id}`)).status).toBe(403);
    expect((await api.call(pat, "GET", `/v1/teams/${teamId}/members`)).status).toBe(403);
    expect(await (await api.db()).select().from(teamMemberships).where(eq(teamMemberships.teamId, teamId))).toEqual([]);
    expect(await listCoachedTeams(await api.as(coach.id))).toEqual([]);
    expect((await listMyMemberships(await api.as(invited.id))).invitations).toEqual([]);
    const kept = await api.call(await api.pat(athlete.id, ["activities.read"]), "GET", "/v1/athletes/me/activities");
    expect(((await kept.json()) as { data: unknown[] }).data).toHaveLength(1);
    // Gone: again is the same refusal as a team never coached.
    expect((await asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}`)).status).toBe(403);
  });

  // PostgreSQL only, as the next: the embedded database runs one write at a time.
  it.runIf(process.env.TEST_DATABASE_URL)("refuses a member's delete at once, without waiting for (or taking) the team's lock a coach's write holds", async () => {
    const coach = await api.person();
    const athlete = await api.person();
    const teamId = await api.team(coach.id, [athlete.id]);
    const invitee = await api.person();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    // The coach's invitation holds its share of the team's row until released.
    const coaching = writeAs(coach.id, async (ctx) => {
      await inviteAthlete({ ctx, teamId, input: InviteAthleteInput.parse({ email: invitee.email }) });
      held();
      await released;
    });
    await holding;
    try {
      const refused = writeAs(athlete.id, (ctx) => deleteTeam({ ctx, teamId })).then(
        () => null,
        (e: unknown) => e,
      );
      let answered = false;
      void refused.then(() => (answered = true));
      const db = await api.db();
      const waitingForLock = async (): Promise<"waited for the lock"> => {
        for (;;) {
          const [n] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_locks where locktype in ('transactionid', 'tuple') and not granted`));
          if (n!.n > 0) return "waited for the lock";
          if (answered) return new Promise<never>(() => {});
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      const first = await Promise.race([refused, waitingForLock()]);
      expect(first).toBeInstanceOf(ApiError);
      expect(first).toMatchObject({ code: "team_not_reachable" });
    } finally {
      release();
      await coaching;
    }
    expect(await canReach(await api.db(), coach.id, athlete.id)).toBe(true);
  });

  // PostgreSQL only: the embedded database runs one write at a time, so the two never meet there.
  it.runIf(process.env.TEST_DATABASE_URL)("an invitation sent while the team is deleted either goes with it or is refused: never a 5xx, never a row left behind", async () => {
    for (let i = 0; i < 10; i++) {
      const coach = await api.person();
      const athlete = await api.person();
      const teamId = await api.team(coach.id, []);
      const [invite, remove] = await Promise.all([
        fetch(`${api.url}/api/console/teams/${teamId}/invitations`, {
          method: "POST",
          headers: { cookie: await sessionCookieFor(coach.id), origin: api.url, "content-type": "application/json" },
          body: JSON.stringify({ email: athlete.email }),
        }),
        asPerson(coach.id, "DELETE", `/api/console/teams/${teamId}`),
      ]);
      expect(remove.status).toBe(200);
      expect([201, 403]).toContain(invite.status);
      expect(await (await api.db()).select().from(teamMemberships).where(eq(teamMemberships.teamId, teamId))).toEqual([]);
    }
  });
});
