import { expect, test } from "@playwright/test";
import { DEMO_PASSWORD, signUpNewPerson } from "./helpers";

// Where the keyboard's focus goes when a button goes away or a submit fails: never to the top of
// the page (<body>), which would send a keyboard or screen-reader user back to the start.

const focusIsOnBody = (page: import("@playwright/test").Page) => page.evaluate(() => document.activeElement === document.body);

test("a failed submit moves the focus to the first field it refused, which says why in a sentence (token name and scopes, profile, redirect URIs, sign-up); a refusal of no field keeps it on the button (sign-in)", async ({ browser, page }) => {
  const { page: mine, context } = await signUpNewPerson(browser, "Fiona");
  try {
    // A token with no name: the focus goes to the name, which is described by its error, said as
    // a sentence though the service gives a fragment (as every field detail it gives).
    await mine.goto("/settings/tokens");
    await mine.getByRole("button", { name: "Create token" }).click();
    const create = mine.getByRole("button", { name: "Create token" });
    await create.focus();
    await mine.keyboard.press("Enter");
    await expect(mine.getByLabel("Name", { exact: true })).toHaveAccessibleDescription("Give the token a name.");
    await expect(mine.getByLabel("Name", { exact: true })).toBeFocused();
    // The name field holds no more than the service takes, counted as it counts: characters, an emoji one.
    const nameField = mine.getByLabel("Name", { exact: true });
    await nameField.fill("x".repeat(101));
    await expect(nameField).toHaveValue("x".repeat(100));
    await nameField.fill("🏃".repeat(101));
    await expect(nameField).toHaveValue("🏃".repeat(100));
    await nameField.fill("");
    await expect(nameField).toBeFocused();

    // Named, with no scope chosen: the first scope's box takes the focus and reads the group's error.
    await mine.getByLabel("Name", { exact: true }).fill("no scopes");
    for (const box of await mine.getByRole("checkbox").all()) await box.uncheck();
    await create.focus();
    await mine.keyboard.press("Enter");
    const firstScope = mine.getByRole("checkbox").first();
    await expect(firstScope).toBeFocused();
    await expect(firstScope).toHaveAttribute("aria-invalid", "true");
    await expect(firstScope).toHaveAccessibleDescription(/^Choose at least one scope\. /);
    await expect(mine.getByRole("group", { name: "Scopes" })).toHaveAccessibleDescription("Choose at least one scope.");

    // A profile with its name cleared: the focus goes to Name; the message is not zod's.
    await mine.goto("/settings/profile");
    await mine.getByLabel("Name").fill("");
    const save = mine.getByRole("button", { name: "Save" });
    await save.focus();
    await mine.keyboard.press("Enter");
    await expect(mine.getByLabel("Name")).toHaveAccessibleDescription("Enter your name.");
    await expect(mine.getByText(/Too small|expected string/)).toHaveCount(0);
    await expect(mine.getByLabel("Name")).toBeFocused();
    // A hint stays linked beside an error: the timezone select is described by it.
    await expect(mine.getByLabel("Timezone")).toHaveAccessibleDescription(/wall-clock time/);

    // A redirect URI the service refuses is named in quotes, in a sentence.
    await mine.goto("/developers/apps");
    await mine.getByRole("button", { name: "Register app" }).click();
    await mine.getByLabel("App name").fill("Fiona's app");
    await mine.getByLabel("Redirect URIs").fill("not a url");
    await mine.getByRole("button", { name: "Register", exact: true }).click();
    await expect(mine.getByLabel("Redirect URIs")).toHaveAccessibleDescription(/"not a url" must not contain spaces\.$/);
  } finally {
    await context.close();
  }

  // Sign-up with a short password: the focus goes to Password, described by its error and its hint.
  await page.goto("/signup");
  await page.getByLabel("Name").fill("Short Password");
  await page.getByLabel("Email").fill(`short-${Date.now()}@example.test`);
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByLabel("Password")).toBeFocused();
  await expect(page.getByLabel("Password")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByLabel("Password")).toHaveAccessibleDescription(/At least 8 characters\./);

  // A wrong password: Sign in stays focused, and the refusal is said.
  await page.goto("/signin");
  await page.getByLabel("Email").fill("ava@example.com");
  await page.getByLabel("Password").fill(`not-${DEMO_PASSWORD}`);
  const signIn = page.getByRole("button", { name: "Sign in" });
  await signIn.focus();
  await page.keyboard.press("Enter");
  await expect(page.getByText("That email and password do not match an account.")).toBeVisible();
  await expect(signIn).toBeFocused();
});

test("Record activity and Edit open their form with the focus in it, and give it back to their button on Cancel and on Save", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Gus");
  try {
    await page.goto("/activities");
    const record = page.getByRole("button", { name: "Record activity" });
    await record.click();
    await expect(page.getByLabel("Name")).toBeFocused();
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(record).toBeFocused();

    await record.click();
    await expect(page.getByLabel("Name")).toBeFocused();
    await page.getByLabel("Name").fill("Focus run");
    await page.getByLabel("Duration").fill("30:00");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Recorded “Focus run”")).toBeVisible();
    await expect(record).toBeFocused();

    await page.getByRole("list", { name: "Activities" }).getByRole("link", { name: "Focus run" }).click();
    const edit = page.getByRole("button", { name: "Edit" });
    await edit.click();
    await expect(page.getByLabel("Name")).toBeFocused();
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(edit).toBeFocused();

    await edit.click();
    await page.getByLabel("Name").fill("Focus run, renamed");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("heading", { level: 1, name: "Focus run, renamed" })).toBeVisible();
    await expect(edit).toBeFocused();
    expect(await focusIsOnBody(page)).toBe(false);
  } finally {
    await context.close();
  }
});

test("declining or accepting an invitation, whose buttons go away with it, moves the focus to what happened", async ({ browser }) => {
  const athlete = await signUpNewPerson(browser, "Hana");
  const coach = await signUpNewPerson(browser, "Ivo");
  try {
    const teams = [`Focus Squad ${Date.now()}`, `Focus Club ${Date.now()}`];
    await coach.page.goto("/teams");
    for (const name of teams) {
      await coach.page.getByLabel("Team name").fill(name);
      await coach.page.getByRole("button", { name: "Create team" }).click();
      const team = coach.page.getByRole("region", { name });
      await team.getByLabel("Email").fill(athlete.email);
      await team.getByRole("button", { name: "Invite athlete" }).click();
      await expect(team.getByText(`Invited ${athlete.email}.`)).toBeVisible();
    }

    const { page } = athlete;
    await page.goto("/settings/teams");
    const invitations = page.getByRole("list", { name: "Pending invitations" });
    await invitations.getByRole("listitem", { name: teams[0] }).getByRole("button", { name: "Decline" }).click();
    await expect(invitations.getByRole("listitem", { name: teams[0] })).toHaveCount(0);
    await expect(page.locator(":focus")).toHaveText(`You declined the invitation to ${teams[0]}.`);

    await invitations.getByRole("listitem", { name: teams[1] }).getByRole("button", { name: "Accept" }).click();
    await expect(page.getByText("No pending invitations.")).toBeVisible();
    await expect(page.locator(":focus")).toHaveText(new RegExp(`^You joined ${teams[1]}\\.`));
  } finally {
    await athlete.context.close();
    await coach.context.close();
  }
});
