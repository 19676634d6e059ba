import { describe, expect, it } from "vitest";
import { setupApi } from "../testing/fixtures";
import { checkSignIn } from "./credentials";
import { MAX_FAILED_SIGNINS } from "./signin-guard";
import { signInRefusalMessage, waitText } from "./signin-message";

const api = setupApi();

describe("the wait a refused sign-in is told, in words", () => {
  it("says 15 minutes for the per-email lock of CONTRACT §10, whose Retry-After runs up to one 10-second slice past 900 s", () => {
    for (const s of [891, 900, 901, 905, 910]) {
      expect(signInRefusalMessage("too_many_attempts", s)).toBe("Too many failed attempts for this email. Wait 15 minutes and try again.");
    }
    expect(signInRefusalMessage("too_many_attempts", undefined)).toMatch(/Wait 15 minutes/);
  });

  it("rounds other waits up to whole minutes, so a person who waits that long is let in", () => {
    expect(waitText(1, "")).toBe("Wait a minute");
    expect(waitText(60, "")).toBe("Wait a minute");
    expect(waitText(61, "")).toBe("Wait 2 minutes");
    expect(waitText(120, "")).toBe("Wait 2 minutes");
    expect(waitText(601, "")).toBe("Wait 11 minutes");
    expect(waitText(undefined, "Wait a few minutes")).toBe("Wait a few minutes");
    // The per-address limit has no slices: its Retry-After is the wait, rounded up.
    expect(signInRefusalMessage("rate_limited", 125)).toBe("Too many sign-in attempts from your network. Wait 3 minutes and try again.");
    // The slice's slack never rounds a wait below what is left of the lock's minutes.
    expect(waitText(911, "", 10)).toBe("Wait 16 minutes");
    expect(waitText(300, "", 10)).toBe("Wait 5 minutes");
    expect(waitText(5, "", 10)).toBe("Wait a minute");
  });

  it("says 15 minutes for the guard's own refusal after ten wrong passwords", async () => {
    const person = await api.person();
    const db = await api.db();
    // Late in a 10-second slice: the refusal runs to that slice's end, the most past 900 s it can.
    const at = Math.floor(Date.now() / 10_000) * 10_000 + 9_000;
    for (let i = 0; i < MAX_FAILED_SIGNINS; i++) await checkSignIn(db, { email: person.email, password: "nope" }, "198.51.100.201", at);
    const refused = await checkSignIn(db, { email: person.email, password: "nope" }, "198.51.100.201", at);
    expect(refused).toMatchObject({ ok: false, reason: "too_many_attempts" });
    const wait = refused.ok ? undefined : refused.retryAfterS;
    expect(wait).toBeGreaterThan(900);
    expect(signInRefusalMessage("too_many_attempts", wait)).toMatch(/Wait 15 minutes/);
  });
});
