import { expect, test } from "@playwright/test";
import { bearer, createToken, signUpNewPerson } from "./helpers";

test("an athlete leaves a team, and a coach removes an athlete and withdraws an invitation: each ends the coach's reach at once", async ({
  browser,
  request,
}) => {
  const [coach, leaver, removed, invitee] = await Promise.all([
    signUpNewPerson(browser, "Coach"),
    signUpNewPerson(browser, "Lena"),
    signUpNewPerson(browser, "Rui"),
    signUpNewPerson(browser, "Ida"),
  ]);
  try {
    const name = `Leaving Squad ${Date.now()}`;
    await coach.page.goto("/teams");
    await coach.page.getByLabel("Team name").fill(name);
    await coach.page.getByRole("button", { name: "Create team" }).click();
    const team = coach.page.getByRole("region", { name });
    for (const person of [leaver, removed, invitee]) {
      await team.getByLabel("Email").fill(person.email);
      await team.getByRole("button", { name: "Invite athlete" }).click();
      await expect(team.getByText(`Invited ${person.email}.`)).toBeVisible();
    }
    for (const person of [leaver, removed]) {
      await person.page.goto("/settings/teams");
      const invitation = person.page.getByRole("list", { name: "Pending invitations" }).getByRole("listitem", { name });
      // Who sent it, by the account's email as well as the name anyone could take; and all a coach will see.
      await expect(invitation).toContainText(`Coach (${coach.email}) invited you on `);
      await expect(invitation).toContainText("your activities with their routes (GPS positions) and your metrics, and download your activity files.");
      await invitation.getByRole("button", { name: "Accept" }).click();
      await expect(person.page.getByRole("list", { name: "Your teams" }).getByRole("listitem", { name })).toBeVisible();
    }

    const token = await createToken(coach.page, "roster", ["athlete.read", "teams.read"]);
    const teams = (await (await request.get("/v1/teams", { headers: bearer(token) })).json()) as { data: { id: string; name: string }[] };
    const teamId = teams.data.find((t) => t.name === name)!.id;
    const members = (await (await request.get(`/v1/teams/${teamId}/members`, { headers: bearer(token) })).json()) as {
      data: { athlete_id: string; name: string }[];
    };
    const idOf = (n: string) => members.data.find((m) => m.name === n)!.athlete_id;
    const [lenaId, ruiId] = [idOf("Lena"), idOf("Rui")];
    for (const id of [lenaId, ruiId]) expect((await request.get(`/v1/athletes/${id}`, { headers: bearer(token) })).status()).toBe(200);

    // Lena leaves on her own page; the focus goes to what happened.
    const { page } = leaver;
    await page.getByRole("list", { name: "Your teams" }).getByRole("listitem", { name }).getByRole("button", { name: "Leave" }).click();
    await expect(page.locator(":focus")).toHaveText(`You left ${name}. Its coaches can no longer see your profile, activities, routes or metrics, or download your activity files.`);
    await expect(page.getByText("You are not on a team. A coach can invite you by your email.")).toBeVisible();
    expect((await request.get(`/v1/athletes/${lenaId}`, { headers: bearer(token) })).status()).toBe(403);

    // Ida has her invitation open when the coach withdraws it.
    await invitee.page.goto("/settings/teams");
    const idaInvitation = invitee.page.getByRole("list", { name: "Pending invitations" }).getByRole("listitem", { name });
    await expect(idaInvitation).toBeVisible();

    // The coach removes Rui and withdraws Ida's invitation.
    await coach.page.goto("/teams");
    const roster = coach.page.getByRole("list", { name: `Members of ${name}` });
    await expect(roster.getByRole("listitem", { name: "Lena" })).toHaveCount(0);
    await roster.getByRole("listitem", { name: "Rui" }).getByRole("button", { name: "Remove" }).click();
    await expect(coach.page.locator(":focus")).toHaveText(`Removed Rui from ${name}. You can no longer see their data.`);
    await expect(roster.getByRole("listitem", { name: "Rui" })).toHaveCount(0);
    expect((await request.get(`/v1/athletes/${ruiId}`, { headers: bearer(token) })).status()).toBe(403);

    await roster.getByRole("listitem", { name: invitee.email }).getByRole("button", { name: "Withdraw" }).click();
    await expect(coach.page.locator(":focus")).toHaveText(`Withdrew the invitation to ${invitee.email}.`);
    await expect(roster.getByRole("listitem")).toHaveCount(1);
    // Her Accept, on the page loaded before, says why nothing happened, and the page drops the invitation.
    await idaInvitation.getByRole("button", { name: "Accept" }).click();
    await expect(invitee.page.getByRole("alert").filter({ hasText: "You have no pending invitation to that team" })).toBeVisible();
    await expect(invitee.page.getByText("No pending invitations.")).toBeVisible();
    await expect(invitee.page.getByText("You are not on a team. A coach can invite you by your email.")).toBeVisible();
  } finally {
    for (const p of [coach, leaver, removed, invitee]) await p.context.close();
  }
});

test("a coach deletes a team, asked once more in words: the athlete's reach ends at once and their team list empties; Cancel keeps it", async ({
  browser,
  request,
}) => {
  const [coach, athlete] = await Promise.all([signUpNewPerson(browser, "Coach"), signUpNewPerson(browser, "Noor")]);
  try {
    const name = `Short Season ${Date.now()}`;
    await coach.page.goto("/teams");
    await coach.page.getByLabel("Team name").fill(name);
    await coach.page.getByRole("button", { name: "Create team" }).click();
    const team = coach.page.getByRole("region", { name });
    await team.getByLabel("Email").fill(athlete.email);
    await team.getByRole("button", { name: "Invite athlete" }).click();
    await expect(team.getByText(`Invited ${athlete.email}.`)).toBeVisible();
    await athlete.page.goto("/settings/teams");
    await athlete.page.getByRole("list", { name: "Pending invitations" }).getByRole("listitem", { name }).getByRole("button", { name: "Accept" }).click();
    await expect(athlete.page.getByRole("list", { name: "Your teams" }).getByRole("listitem", { name })).toBeVisible();

    const token = await createToken(coach.page, "roster", ["athlete.read", "teams.read"]);
    const teams = (await (await request.get("/v1/teams", { headers: bearer(token) })).json()) as { data: { id: string; name: string }[] };
    const teamId = teams.data.find((t) => t.name === name)!.id;
    const members = (await (await request.get(`/v1/teams/${teamId}/members`, { headers: bearer(token) })).json()) as { data: { athlete_id: string; name: string }[] };
    const noorId = members.data.find((m) => m.name === "Noor")!.athlete_id;
    expect((await request.get(`/v1/athletes/${noorId}`, { headers: bearer(token) })).status()).toBe(200);

    await coach.page.goto("/teams");
    // Cancel first: nothing happens, and the keyboard is back on the button.
    await team.getByRole("button", { name: "Delete team" }).click();
    const asked = team.getByRole("group", { name: `Delete ${name}` });
    await expect(coach.page.locator(":focus")).toHaveText(
      `Delete ${name}? Its athlete stays on the service with all their data, but you will no longer see it, and invitations not yet answered are withdrawn. This cannot be undone.`,
    );
    await asked.getByRole("button", { name: "Cancel" }).click();
    await expect(team.getByRole("button", { name: "Delete team" })).toBeFocused();
    expect((await request.get(`/v1/athletes/${noorId}`, { headers: bearer(token) })).status()).toBe(200);

    await team.getByRole("button", { name: "Delete team" }).click();
    await asked.getByRole("button", { name: `Delete ${name}` }).click();
    await expect(coach.page.locator(":focus")).toHaveText(`Deleted ${name}. Its athletes keep their data; you no longer see it.`);
    await expect(coach.page.getByRole("region", { name })).toHaveCount(0);
    await expect(coach.page.getByText("You do not coach a team yet.")).toBeVisible();
    expect((await request.get(`/v1/athletes/${noorId}`, { headers: bearer(token) })).status()).toBe(403);

    await athlete.page.goto("/settings/teams");
    await expect(athlete.page.getByText("You are not on a team. A coach can invite you by your email.")).toBeVisible();
  } finally {
    for (const p of [coach, athlete]) await p.context.close();
  }
});
