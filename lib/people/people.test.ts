import { afterEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { users } from "../db/schema";
import { resetEnvForTests } from "../env";
import { awayFromWindowEdge } from "../testing/clock";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { SignUpRateLimited, signUpFrom } from "./people";
import { SignUpInput } from "./schemas";
import { UpdateProfileInput } from "../athletes/update-profile";

const api = setupApi();

afterEach(() => {
  delete process.env.RATE_LIMIT_15MIN;
  resetEnvForTests();
});

const newcomer = () => ({ name: "New", email: `n-${randomBytes(5).toString("hex")}@example.test`, password: "a-long-password" });

describe("signUpFrom: sign-up is limited per source address", () => {
  it("refuses an address past its window before hashing or creating anything, with the seconds to wait; other addresses go on", async () => {
    process.env.RATE_LIMIT_15MIN = "3";
    resetEnvForTests();
    const db = await api.db();
    await awayFromWindowEdge();
    for (let i = 0; i < 3; i++) await expect(signUpFrom(db, newcomer(), "203.0.113.9")).resolves.toMatchObject({ id: expect.any(String) });

    const refused = newcomer();
    const err = await signUpFrom(db, refused, "203.0.113.9").then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SignUpRateLimited);
    expect((err as SignUpRateLimited).retryAfterS).toBeGreaterThan(0);
    expect(await countRows(users, eq(users.email, refused.email))).toBe(0);

    await expect(signUpFrom(db, newcomer(), "203.0.113.10")).resolves.toMatchObject({ id: expect.any(String) });
  });
});

describe("a person's name", () => {
  it("refuses what would turn it around or hide a lookalike (bidi, zero-width, NUL), at sign-up and in the profile, and keeps an emoji sequence", () => {
    const base = { email: "n@example.com", password: "a-long-password" };
    for (const name of ["Eve\u202Egnp.exe", "Zed\u200B", "A\u0000B"]) {
      expect(SignUpInput.safeParse({ ...base, name }).success, JSON.stringify(name)).toBe(false);
      expect(UpdateProfileInput.safeParse({ name }).success, JSON.stringify(name)).toBe(false);
    }
    expect(SignUpInput.safeParse({ ...base, name: "Ava 👩\u200D💻" }).success).toBe(true);
    expect(UpdateProfileInput.safeParse({ name: "Ava Lind" }).success).toBe(true);
  });
});

describe("a sign-up with only an email and a password (CONTRACT §9's two fields)", () => {
  it("is taken, named by the email's part before the @ until the person sets a name; a name given is kept", async () => {
    const db = await api.db();
    const email = `Nameless.${Date.now()}@Example.com`;
    for (const name of [undefined, "", "   "]) {
      const parsed = SignUpInput.safeParse({ email: `${name === undefined ? "u" : name.length}${email}`, password: "a-long-password", name });
      expect(parsed.success, JSON.stringify(name)).toBe(true);
      expect(parsed.data!.name).toBe(`${name === undefined ? "u" : name.length}${email}`.toLowerCase().split("@")[0]);
    }
    const parsed = SignUpInput.safeParse({ email, password: "a-long-password" });
    const person = await signUpFrom(db, parsed.data!, "203.0.113.30");
    const me = (await (await api.call(await api.pat(person.id, ["athlete.read"]), "GET", "/v1/athletes/me")).json()) as { name: string };
    expect(me.name).toBe(email.toLowerCase().split("@")[0]);
    expect(SignUpInput.parse({ email: "b@example.com", password: "a-long-password", name: " Bo Lind " }).name).toBe("Bo Lind");
  });
});

describe("a new account's timezone (the browser's, sent by the sign-up form)", () => {
  it("is kept when the service knows it, and left at the default (UTC), never refused, when it does not", async () => {
    const db = await api.db();
    for (const [sent, kept] of [
      ["Pacific/Auckland", "Pacific/Auckland"],
      ["Asia/Calcutta", "Asia/Calcutta"],
      // Another name of a zone the browser may report: the zone under this service's name.
      ["US/Eastern", "America/New_York"],
      ["Etc/GMT+12", "Etc/GMT+12"],
      ["+05:30", "UTC"],
      ["Mars/Olympus_Mons", "UTC"],
      ["", "UTC"],
      [undefined, "UTC"],
    ] as const) {
      const parsed = SignUpInput.safeParse({ ...newcomer(), timezone: sent });
      expect(parsed.success, String(sent)).toBe(true);
      const person = await signUpFrom(db, parsed.data!, "203.0.113.20");
      const profile = (await (await api.call(await api.pat(person.id, ["athlete.read"]), "GET", "/v1/athletes/me")).json()) as { timezone: string };
      expect(profile.timezone, String(sent)).toBe(kept);
    }
  });
});
