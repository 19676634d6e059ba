import { describe, expect, it } from "vitest";
import { hasHiddenCharacters, printableExcerpt } from "./text";

describe("hasHiddenCharacters", () => {
  it("finds controls, bidi overrides and isolates, zero-width characters and separators", () => {
    for (const text of ["a\u202Eb", "a\u2066b", "a\u200Bb", "x\u0007", "line\u2028break", "\uE000private", "lone \uD800"]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(true);
    }
  });

  it("lets the joiners stand where writing needs them: ZWJ in an emoji sequence, ZWNJ between letters of other scripts", () => {
    for (const text of ["👩\u200D💻 Coding", "Run 🏃🏽\u200D♀️", "می\u200Cخواهم", "क्\u200Cष", "plain name"]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(false);
    }
  });

  it("finds the joiners where they would hide a lookalike: between Latin letters, or leading an emoji", () => {
    for (const text of ["ex\u200Dample", "ex\u200Cample", "\u200D👩", "a\u200D👩"]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(true);
    }
  });
});

describe("printableExcerpt", () => {
  it("turns hidden characters into spaces and cuts with an ellipsis within the length", () => {
    expect(printableExcerpt("a\u202Eb\u0000c", 10)).toBe("a b c");
    expect(printableExcerpt("abcdefghij", 5)).toBe("abcd…");
  });
});
