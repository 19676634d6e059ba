import { describe, expect, it } from "vitest";
import { BASE62, randomBase62 } from "./random";

describe("randomBase62", () => {
  it("gives text of the asked length, in base62, never the same twice across many pages of the pool", () => {
    const seen = new Set<string>();
    // 22 characters take about 23 bytes: 2,000 ids draw some ten 4 KiB pages.
    for (let i = 0; i < 2000; i++) {
      const id = randomBase62(22);
      expect(id).toMatch(/^[0-9A-Za-z]{22}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
    expect(randomBase62(43)).toHaveLength(43);
    expect(randomBase62(5000)).toHaveLength(5000); // longer than a page
  });

  it("uses every character about equally (no modulo bias)", () => {
    const counts = new Map<string, number>();
    const text = randomBase62(62 * 2000);
    for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Each character's count is Binomial(124,000, 1/62): mean 2,000, sd about 44.4. Eight sd
    // either way: a fair source fails this about once in 10^14 runs; one that biased the first
    // 8 characters (byte % 62 over all 256 bytes) gives them about 2,400.
    for (const ch of BASE62) {
      expect(counts.get(ch)).toBeGreaterThan(2000 - 8 * 44.4);
      expect(counts.get(ch)).toBeLessThan(2000 + 8 * 44.4);
    }
  });
});
