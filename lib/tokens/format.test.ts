import { describe, expect, it } from "vitest";
import { generateToken, isWellFormedToken } from "./format";

describe("token format (CONTRACT §6)", () => {
  it("accepts the contract's demo client secret, whose checksum was computed independently", () => {
    expect(isWellFormedToken("aas_cs_DemoTrainingLogSecret00000000001v3hLV", "clientSecret")).toBe(true);
  });

  it("generates prefixed tokens with >= 30 random characters and a valid checksum", () => {
    const t = generateToken("pat");
    expect(t).toMatch(/^aas_pat_[0-9A-Za-z]{38}$/);
    expect(isWellFormedToken(t, "pat")).toBe(true);
    expect(generateToken("pat")).not.toBe(t);
  });

  it("rejects a one-character typo, a wrong prefix and a short body", () => {
    const t = generateToken("pat");
    const typo = t.slice(0, 12) + (t[12] === "a" ? "b" : "a") + t.slice(13);
    expect(isWellFormedToken(typo, "pat")).toBe(false);
    expect(isWellFormedToken(t, "refresh")).toBe(false);
    expect(isWellFormedToken("aas_pat_abc123", "pat")).toBe(false);
  });
});
