import { expect, test } from "@playwright/test";
import { bearer, createToken, signIn } from "./helpers";

test("the demo coach reads a team member's profile with a PAT and is refused another athlete", async ({ browser, request }) => {
  // Eve, in no team: her id, from her own token.
  const eveContext = await browser.newContext();
  const evePage = await eveContext.newPage();
  await signIn(evePage, "eve@example.com");
  const eveToken = await createToken(evePage, "whoami", ["athlete.read"]);
  const eve = (await (await request.get("/v1/athletes/me", { headers: bearer(eveToken) })).json()) as { id: string };
  await eveContext.close();

  const coachContext = await browser.newContext();
  const page = await coachContext.newPage();
  await signIn(page, "cora@example.com");
  const token = await createToken(page, "team dashboard", ["athlete.read", "teams.read"]);

  const teams = (await (await request.get("/v1/teams", { headers: bearer(token) })).json()) as {
    data: { id: string; name: string; role: string }[];
  };
  const harbor = teams.data.find((t) => t.name === "Harbor Runners");
  expect(harbor?.role).toBe("coach");

  const members = (await (await request.get(`/v1/teams/${harbor!.id}/members`, { headers: bearer(token) })).json()) as {
    data: { athlete_id: string; name: string; role: string }[];
  };
  const ava = members.data.find((m) => m.name === "Ava Lind");
  expect(ava?.role).toBe("athlete");

  const profile = await request.get(`/v1/athletes/${ava!.athlete_id}`, { headers: bearer(token) });
  expect(profile.status()).toBe(200);
  expect(await profile.json()).toMatchObject({ email: "ava@example.com", timezone: "Europe/Oslo" });

  const refused = await request.get(`/v1/athletes/${eve.id}`, { headers: bearer(token) });
  expect(refused.status()).toBe(403);
  expect(await refused.json()).toMatchObject({ code: "athlete_not_reachable" });
  await coachContext.close();
});
