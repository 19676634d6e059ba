import { describe, expect, it } from "vitest";
import { sealWith, unsealWith } from "./aead";

const parts = (sealed: string) => sealed.split(".") as [string, string, string, string];
const b64 = (b: Buffer) => b.toString("base64url");

describe("sealing (AES-256-GCM)", () => {
  it("opens what it sealed, under each of several secrets used in turn", () => {
    const secrets = ["one", "two", "three"];
    for (let round = 0; round < 3; round++) {
      for (const secret of secrets) {
        const text = `whsec_${secret}_${round}_ü`;
        const sealed = sealWith(secret, text);
        expect(unsealWith(secret, sealed)).toBe(text);
        // The same text seals differently every time (a fresh IV).
        expect(sealWith(secret, text)).not.toBe(sealed);
      }
    }
    const sealed = sealWith("one", "secret");
    expect(() => unsealWith("two", sealed)).toThrow();
  });

  it("refuses a changed body or tag", () => {
    const [v, iv, tag, body] = parts(sealWith("k", "hello"));
    const flipped = Buffer.from(body, "base64url");
    flipped[0]! ^= 1;
    expect(() => unsealWith("k", [v, iv, tag, b64(flipped)].join("."))).toThrow();
    const otherTag = Buffer.from(tag, "base64url");
    otherTag[15]! ^= 1;
    expect(() => unsealWith("k", [v, iv, b64(otherTag), body].join("."))).toThrow();
  });

  it("refuses a truncated tag: four bytes of it must not pass as proof", () => {
    const [v, iv, tag, body] = parts(sealWith("k", "hello"));
    const full = Buffer.from(tag, "base64url");
    for (const n of [4, 8, 12]) {
      expect(() => unsealWith("k", [v, iv, b64(full.subarray(0, n)), body].join("."))).toThrow(/tag/i);
    }
  });

  it("refuses what is not a sealed value", () => {
    expect(() => unsealWith("k", "v2.a.b.c")).toThrow(/Not a sealed secret/);
    expect(() => unsealWith("k", "plain")).toThrow(/Not a sealed secret/);
  });
});
