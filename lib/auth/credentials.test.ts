import { afterEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "../env";
import { setupApi } from "../testing/fixtures";
import { checkSignIn } from "./credentials";
import { MAX_FAILED_SIGNINS } from "./signin-guard";

const api = setupApi();

const PASSWORD = "correct horse battery"; // what api.person() signs people up with
const SPAN_MS = 15 * 60_000;
/** The start of one of the guard's 10-second slices, `offsetMs` into it. */
const sliceAligned = (offsetMs: number) => Math.floor(Date.now() / 10_000) * 10_000 + offsetMs;

let nextAddress = 1;
/** A source address of its own per test, so the per-address window never decides a per-email test. */
const freshAddress = () => `198.51.100.${nextAddress++}`;

afterEach(() => {
  delete process.env.RATE_LIMIT_15MIN;
  resetEnvForTests();
});

describe("checkSignIn: at most ten guesses per email per 15 minutes (CONTRACT §10)", () => {
  it("verifies at most ten of 100 parallel wrong passwords for one email; the rest are refused unverified", async () => {
    const person = await api.person();
    const address = freshAddress();
    const db = await api.db();
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) => checkSignIn(db, { email: person.email, password: `guess-${i}` }, address)),
    );
    const reasons = outcomes.map((o) => (o.ok ? "ok" : o.reason));
    // `invalid_credentials` is the answer of a password that was verified (argon2) and wrong.
    expect(reasons.filter((r) => r === "invalid_credentials")).toHaveLength(MAX_FAILED_SIGNINS);
    expect(reasons.filter((r) => r === "too_many_attempts")).toHaveLength(100 - MAX_FAILED_SIGNINS);
    for (const o of outcomes) {
      if (!o.ok && o.reason === "too_many_attempts") expect(o.retryAfterS).toBeGreaterThanOrEqual(15 * 60 - 60);
    }
    // The right password is refused too while the email is locked.
    const right = await checkSignIn(db, { email: person.email, password: PASSWORD }, address);
    expect(right).toMatchObject({ ok: false, reason: "too_many_attempts" });
  });

  it("does not count successful sign-ins: each gives its place back", async () => {
    const person = await api.person();
    const address = freshAddress();
    const db = await api.db();
    const now = sliceAligned(1_000);
    for (let i = 0; i < 15; i++) {
      expect(await checkSignIn(db, { email: person.email, password: PASSWORD }, address, now)).toMatchObject({ ok: true });
    }
    const wrong = await Promise.all(
      Array.from({ length: MAX_FAILED_SIGNINS }, () => checkSignIn(db, { email: person.email, password: "nope" }, address, now)),
    );
    expect(wrong.map((o) => (o.ok ? "ok" : o.reason))).toEqual(Array(MAX_FAILED_SIGNINS).fill("invalid_credentials"));
    expect(await checkSignIn(db, { email: person.email, password: PASSWORD }, address, now)).toMatchObject({
      ok: false,
      reason: "too_many_attempts",
    });
  });

  it("refuses the email for 15 minutes after ten failures in a row, saying how long, and lets it in again after", async () => {
    const person = await api.person();
    const address = freshAddress();
    const db = await api.db();
    const at = sliceAligned(5_000);
    for (let i = 0; i < MAX_FAILED_SIGNINS; i++) {
      expect(await checkSignIn(db, { email: person.email, password: "nope" }, address, at)).toMatchObject({
        reason: "invalid_credentials",
      });
    }
    const later = (ms: number) => checkSignIn(db, { email: person.email, password: PASSWORD }, address, at + ms);
    const refused = await later(1_000);
    expect(refused).toMatchObject({ ok: false, reason: "too_many_attempts" });
    // 15 minutes from the failures, to the end of their 10-second slice: never less, never more than 10 s over.
    const wait = refused.ok ? 0 : refused.retryAfterS!;
    expect(wait).toBeGreaterThanOrEqual(15 * 60 - 1);
    expect(wait).toBeLessThanOrEqual(15 * 60 + 10);
    expect(await later(SPAN_MS - 1_000)).toMatchObject({ ok: false, reason: "too_many_attempts" });
    expect(await later(1_000 + wait * 1_000)).toMatchObject({ ok: true });
  });

  it("verifies no more than ten passwords in any 15 minutes, and refuses for 15 minutes from the tenth however the ten were spread", async () => {
    const person = await api.person();
    const address = freshAddress();
    const db = await api.db();
    const start = sliceAligned(1_000);
    const attempt = (at: number, password = "nope") => checkSignIn(db, { email: person.email, password }, address, at);
    for (let i = 0; i < MAX_FAILED_SIGNINS - 1; i++) expect(await attempt(start)).toMatchObject({ reason: "invalid_credentials" });
    // Fourteen minutes later: one more is verified, then the email is refused.
    const late = start + 14 * 60_000;
    expect(await attempt(late)).toMatchObject({ reason: "invalid_credentials" });
    const refused = await attempt(late + 1_000);
    expect(refused).toMatchObject({ ok: false, reason: "too_many_attempts" });
    // 15 minutes from the tenth failure (to the end of its slice), not until the first nine stop counting.
    const wait = refused.ok ? 0 : refused.retryAfterS!;
    expect(wait).toBeGreaterThanOrEqual(15 * 60 - 1);
    expect(wait).toBeLessThanOrEqual(15 * 60 + 10);
    // Once the first nine are over 15 minutes old, the email is still refused, with the right password too, and says the same end.
    const afterNine = await attempt(start + SPAN_MS + 60_000, PASSWORD);
    expect(afterNine).toMatchObject({ ok: false, reason: "too_many_attempts" });
    const freeAt = late + 1_000 + wait * 1_000;
    const freeAtAgain = start + SPAN_MS + 60_000 + (afterNine.ok ? 0 : afterNine.retryAfterS!) * 1_000;
    expect(Math.abs(freeAtAgain - freeAt)).toBeLessThanOrEqual(1_000);
    expect(await attempt(late + SPAN_MS - 1_000, PASSWORD)).toMatchObject({ ok: false, reason: "too_many_attempts" });
    expect(await attempt(late + 1_000 + wait * 1_000, PASSWORD)).toMatchObject({ ok: true });
  });

  it("does not lock when ten failures are never within 15 minutes of each other", async () => {
    const person = await api.person();
    const address = freshAddress();
    const db = await api.db();
    const start = sliceAligned(1_000);
    const attempt = (at: number) => checkSignIn(db, { email: person.email, password: "nope" }, address, at);
    for (let i = 0; i < MAX_FAILED_SIGNINS - 1; i++) expect(await attempt(start)).toMatchObject({ reason: "invalid_credentials" });
    // The tenth comes after the first nine stopped counting: nine in its 15 minutes, so no lock.
    const after = start + SPAN_MS + 20_000;
    expect(await attempt(after)).toMatchObject({ reason: "invalid_credentials" });
    expect(await checkSignIn(db, { email: person.email, password: PASSWORD }, address, after + 1_000)).toMatchObject({ ok: true });
  });

  it("keeps emails apart: one email's lockout does not touch another's", async () => {
    const locked = await api.person();
    const other = await api.person();
    const address = freshAddress();
    const db = await api.db();
    await Promise.all(
      Array.from({ length: MAX_FAILED_SIGNINS + 5 }, () => checkSignIn(db, { email: locked.email, password: "nope" }, address)),
    );
    expect(await checkSignIn(db, { email: other.email, password: PASSWORD }, address)).toMatchObject({ ok: true });
  });
});

describe("checkSignIn: a window per source address", () => {
  it("answers rate_limited with the seconds to wait once an address used its window, before any password is verified", async () => {
    process.env.RATE_LIMIT_15MIN = "3";
    resetEnvForTests();
    const person = await api.person();
    const db = await api.db();
    const address = freshAddress();
    // One clock for the whole test, so that no window ends between the requests.
    const now = sliceAligned(1_000);
    for (let i = 0; i < 3; i++) {
      expect(await checkSignIn(db, { email: person.email, password: PASSWORD }, address, now)).toMatchObject({ ok: true });
    }
    const refused = await checkSignIn(db, { email: person.email, password: PASSWORD }, address, now);
    expect(refused).toMatchObject({ ok: false, reason: "rate_limited" });
    expect(refused.ok === false && refused.retryAfterS).toBeGreaterThan(0);
    // Another address is not affected.
    expect(await checkSignIn(db, { email: person.email, password: PASSWORD }, freshAddress())).toMatchObject({ ok: true });
  });
});
