import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { athleteProfiles } from "../db/schema";
import { setupApi } from "../testing/fixtures";

const api = setupApi();

describe("GET /v1/athletes/{athlete_id}", () => {
  it("returns the token's own profile for `me`, with SPEC §2.1's fields", async () => {
    const ava = await api.person({ name: "Ava", timezone: "Europe/Oslo" });
    const res = await api.call(await api.pat(ava.id, ["athlete.read"]), "GET", "/v1/athletes/me");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({
      id: ava.id,
      name: "Ava",
      email: ava.email,
      timezone: "Europe/Oslo",
      has_subscription: true,
      trial_ends_at: null,
      uses_metric_units: true,
      connected_integrations: [],
    });
    expect(res.headers.get("ratelimit-policy")).toContain('"15min";q=600;w=900');
    expect(res.headers.get("ratelimit")).toMatch(/"15min";r=599;t=\d+/);
  });

  it("reads the profile as it is at this request, by `me` and by the athlete's own id", async () => {
    const ava = await api.person({ name: "Ava", timezone: "Europe/Oslo" });
    const token = await api.pat(ava.id, ["athlete.read"]);
    expect((await (await api.call(token, "GET", "/v1/athletes/me")).json()).timezone).toBe("Europe/Oslo");
    // Changed on the console's settings page, between two API requests.
    await (await api.db())
      .update(athleteProfiles)
      .set({ timezone: "America/Denver", usesMetricUnits: false })
      .where(eq(athleteProfiles.userId, ava.id));
    for (const path of ["/v1/athletes/me", `/v1/athletes/${ava.id}`]) {
      const body = await (await api.call(token, "GET", path)).json();
      expect(body).toMatchObject({ id: ava.id, timezone: "America/Denver", uses_metric_units: false });
    }
  });

  it("lets a coach read an active team member, and refuses anyone else with 403", async () => {
    const coach = await api.person();
    const member = await api.person();
    const invited = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [member.id]);
    await api.team(coach.id, [invited.id], { memberStatus: "invited" });
    const token = await api.pat(coach.id, ["athlete.read"]);

    expect((await api.call(token, "GET", `/v1/athletes/${member.id}`)).status).toBe(200);
    for (const id of [stranger.id, invited.id, "ath_doesnotexist"]) {
      const res = await api.call(token, "GET", `/v1/athletes/${id}`);
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect((await res.json()).code).toBe("athlete_not_reachable");
    }
  });

  it("does not let an athlete read their coach or teammates", async () => {
    const coach = await api.person();
    const a = await api.person();
    const b = await api.person();
    await api.team(coach.id, [a.id, b.id]);
    const token = await api.pat(a.id, ["athlete.read"]);
    expect((await api.call(token, "GET", `/v1/athletes/${b.id}`)).status).toBe(403);
    expect((await api.call(token, "GET", `/v1/athletes/${coach.id}`)).status).toBe(403);
  });

  it("needs athlete.read: 403 insufficient_scope with WWW-Authenticate naming it", async () => {
    const p = await api.person();
    const res = await api.call(await api.pat(p.id, ["activities.read"]), "GET", "/v1/athletes/me");
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="athlete.read"');
    expect((await res.json()).code).toBe("insufficient_scope");
  });

  it("answers 402 for an account whose trial ended, and serves one whose trial runs", async () => {
    const ben = await api.person({ billing: "expired" });
    const dan = await api.person({ billing: "trial" });
    const res = await api.call(await api.pat(ben.id), "GET", "/v1/athletes/me");
    expect(res.status).toBe(402);
    expect((await res.json()).code).toBe("subscription_required");
    const ok = await api.call(await api.pat(dan.id), "GET", "/v1/athletes/me");
    expect(ok.status).toBe(200);
    expect((await ok.json()).has_subscription).toBe(false);
  });

  it("answers 405 with Allow for a method the path does not serve", async () => {
    const p = await api.person();
    const res = await api.call(await api.pat(p.id), "DELETE", "/v1/athletes/me");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    const body = await res.json();
    expect(body).toMatchObject({ status: 405, code: "method_not_allowed", type: `${api.url}/problems/method_not_allowed` });
  });
});
