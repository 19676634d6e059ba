import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { afterFailure, DEFAULT_RETRY_SCHEDULE_S, DISABLE_AFTER_FAILURES, FAILING_AFTER_FAILURES, MAX_ATTEMPTS, retryDelayS } from "./policy";

describe("delivery policy: the retry schedule (CONTRACT §7)", () => {
  const exact = () => 0.5; // jitter factor exactly 1

  it("follows 10 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h, then every 12 h", () => {
    const waits = Array.from({ length: 12 }, (_, i) => retryDelayS(i + 1, DEFAULT_RETRY_SCHEDULE_S, exact));
    expect(waits).toEqual([10, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200, 43_200, 43_200]);
  });

  it("jitters by at most ±20 %", () => {
    expect(retryDelayS(2, DEFAULT_RETRY_SCHEDULE_S, () => 0)).toBeCloseTo(48);
    expect(retryDelayS(2, DEFAULT_RETRY_SCHEDULE_S, () => 0.999999)).toBeCloseTo(72, 3);
  });

  it("stops after the 20th attempt", () => {
    expect(retryDelayS(MAX_ATTEMPTS - 1, DEFAULT_RETRY_SCHEDULE_S, exact)).toBe(43_200);
    expect(retryDelayS(MAX_ATTEMPTS, DEFAULT_RETRY_SCHEDULE_S, exact)).toBeNull();
  });

  it("takes a replacement schedule (WEBHOOK_RETRY_SCHEDULE_S), repeating its last step", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayS(n, [0.1, 0.2], exact))).toEqual([0.1, 0.2, 0.2, 0.2]);
  });
});

describe("what a failed attempt leads to (CONTRACT §7)", () => {
  const active = (consecutiveFailures: number) => ({ status: "active" as const, consecutiveFailures });
  const exact = () => 0.5;

  it("the first failure starts the streak; after that only the probe counts", () => {
    expect(afterFailure({ attempt: 1, subscription: active(0), probe: false, random: exact })).toMatchObject({ countsTowardsStreak: true, streak: 1, disable: false, retryInS: 10 });
    // In flight beside the first failure: logged and retried, not counted.
    expect(afterFailure({ attempt: 1, subscription: active(1), probe: false, random: exact })).toMatchObject({ countsTowardsStreak: false, streak: 1, retryInS: 10 });
    expect(afterFailure({ attempt: 2, subscription: active(1), probe: true, random: exact })).toMatchObject({ countsTowardsStreak: true, streak: 2, retryInS: 60 });
  });

  it("disables the subscription at exactly DISABLE_AFTER_FAILURES, and only by a counted failure", () => {
    expect(afterFailure({ attempt: 3, subscription: active(DISABLE_AFTER_FAILURES - 2), probe: true }).disable).toBe(false);
    expect(afterFailure({ attempt: 3, subscription: active(DISABLE_AFTER_FAILURES - 1), probe: true }).disable).toBe(true);
    expect(afterFailure({ attempt: 3, subscription: active(DISABLE_AFTER_FAILURES - 1), probe: false }).disable).toBe(false);
    expect(afterFailure({ attempt: 3, subscription: { status: "disabled", consecutiveFailures: DISABLE_AFTER_FAILURES }, probe: true })).toMatchObject({
      countsTowardsStreak: false,
      disable: false,
    });
  });

  it("a failure of a delivery another attempt already delivered counts for nothing, even a failing subscription's probe", () => {
    expect(afterFailure({ attempt: 2, subscription: active(0), probe: false, delivered: true })).toMatchObject({ countsTowardsStreak: false, streak: 0, disable: false });
    expect(afterFailure({ attempt: 3, subscription: active(DISABLE_AFTER_FAILURES - 1), probe: true, delivered: true })).toMatchObject({
      countsTowardsStreak: false,
      disable: false,
    });
  });

  it("fails the delivery after its last attempt", () => {
    expect(afterFailure({ attempt: MAX_ATTEMPTS, subscription: active(1), probe: false }).retryInS).toBeNull();
  });
});

describe("delivery policy: where people read it", () => {
  const root = path.resolve(__dirname, "../..");
  const read = (file: string) => readFileSync(path.join(root, file), "utf8").replace(/\s+/g, " ");
  /** 10 → "10 s", 60 → "1 min", 3600 → "1 h". */
  const words = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);

  it("marks a subscription failing before it disables it", () => {
    expect(FAILING_AFTER_FAILURES).toBeLessThan(DISABLE_AFTER_FAILURES);
  });

  const missing = (file: string, phrases: string[]) => {
    const text = read(file);
    return phrases.filter((p) => !text.includes(p));
  };

  it("is the README's: the Webhooks table states policy.ts's schedule, attempts and thresholds", () => {
    const steps = DEFAULT_RETRY_SCHEDULE_S.map(words);
    const schedule = `${steps.slice(0, -1).join(", ")}, then every ${steps.at(-1)} (±20 %), up to ${MAX_ATTEMPTS} attempts`;
    expect(
      missing("README.md", [
        `is retried after ${schedule}`,
        `At ${FAILING_AFTER_FAILURES} the console marks the endpoint failing; at ${DISABLE_AFTER_FAILURES} it is disabled`,
        `after ${DISABLE_AFTER_FAILURES} failures or by the developer`,
        `one of the ${MAX_ATTEMPTS} attempts`,
      ]),
    ).toEqual([]);
  });

  it("is ARCHITECTURE.md's: its delivery picture names the constants with their values", () => {
    expect(missing("ARCHITECTURE.md", [`MAX_ATTEMPTS ${MAX_ATTEMPTS}`, `DISABLE_AFTER_FAILURES ${DISABLE_AFTER_FAILURES}`, `failed after ${MAX_ATTEMPTS} attempts`])).toEqual([]);
  });
});
