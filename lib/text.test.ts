import { describe, expect, it } from "vitest";
import { firstCharacters, hasHiddenCharacters, printableExcerpt, stripHiddenCharacters, withControlsShown } from "./text";

describe("hasHiddenCharacters", () => {
  it("finds controls, bidi overrides and isolates, zero-width characters and separators", () => {
    for (const text of ["a\u202Eb", "a\u2066b", "a\u200Bb", "x\u0007", "line\u2028break", "\uE000private", "lone \uD800"]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(true);
    }
  });

  it("lets the joiners stand where writing needs them: ZWJ in an emoji sequence, ZWNJ between letters of other scripts", () => {
    const scotland = "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
    for (const text of ["👩\u200D💻 Coding", "Run 🏃🏽\u200D♀️", "می\u200Cخواهم", "مِ\u200Cی", "क्\u200Cष", "क्\u200Dष", "plain name", `Run ${scotland}`]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(false);
    }
  });

  it("finds the joiners where they would hide a lookalike: between Latin letters, or leading an emoji", () => {
    // Tags hide text unless they spell a flag after the black flag.
    for (const text of ["ex\u200Dample", "ex\u200Cample", "\u200D👩", "a\u200D👩", "東京\u200Cランナーズ", "Հ\u200Cօ", "Run \u{E0067}\u{E0062}", "🏃\u{E0067}\u{E007F}"]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(true);
    }
  });
});

describe("other characters drawn as nothing", () => {
  it("are hidden too: a combining grapheme joiner, variation selectors away from an emoji, Hangul fillers, the Braille blank", () => {
    for (const text of ["Harbor\u034F Runners", "pay\uFE0Fpal", "x\u{E0100}", "\u3164", "a\u115Fb", "\u2800", "a\u17B4b", "a\u180Bb"]) {
      expect(hasHiddenCharacters(text), JSON.stringify(text)).toBe(true);
    }
    expect(hasHiddenCharacters("I \u2764\uFE0F running")).toBe(false);
  });

  it("finds combining marks that combine with nothing, at the start: a name of them alone looks empty", () => {
    expect(hasHiddenCharacters("\u0301\u0301")).toBe(true);
    expect(hasHiddenCharacters("\u0301Café")).toBe(true);
    expect(hasHiddenCharacters("Cafe\u0301 ride")).toBe(false);
    expect(hasHiddenCharacters("क्षेत्र")).toBe(false);
    expect(stripHiddenCharacters("\u0301\u0301Løp")).toBe("Løp");
  });

  it("are all hidden in a URL, where nothing hidden belongs", () => {
    for (const text of ["https://a.example/👩\u200D💻", "https://a.example/\u0627\u200C\u0628", "https://a.example/\u2764\uFE0F"]) {
      expect(hasHiddenCharacters(text, { strict: true }), JSON.stringify(text)).toBe(true);
    }
    expect(hasHiddenCharacters("https://a.example/cb?x=1", { strict: true })).toBe(false);
  });

  it("are taken out of a file's name, but for what the name keeps in place", () => {
    expect(stripHiddenCharacters("می\u200Cخواهم.fit")).toBe("می\u200Cخواهم.fit");
    expect(stripHiddenCharacters("👩\u200D💻 ride.fit")).toBe("👩\u200D💻 ride.fit");
    expect(stripHiddenCharacters("ri\u200Bde\u202E.fit")).toBe("ride.fit");
  });
});

describe("printableExcerpt", () => {
  it("turns hidden characters into spaces and cuts with an ellipsis within the length", () => {
    expect(printableExcerpt("a\u202Eb\u0000c", 10)).toBe("a b c");
    expect(printableExcerpt("abcdefghij", 5)).toBe("abcd…");
  });
});

describe("firstCharacters", () => {
  it("counts code points, as the service does, and never splits a surrogate pair", () => {
    expect(firstCharacters("😀".repeat(150), 200)).toBe("😀".repeat(150));
    expect(firstCharacters("😀".repeat(201), 200)).toBe("😀".repeat(200));
    expect(firstCharacters("a".repeat(201), 200)).toBe("a".repeat(200));
    expect(firstCharacters("ab😀", 2)).toBe("ab");
    expect(firstCharacters("a😀b", 2)).toBe("a😀");
  });
});

describe("withControlsShown", () => {
  it("keeps tabs, line breaks and every letter, shows other controls and bidi overrides as U+FFFD, and drops NUL", () => {
    expect(withControlsShown("a\tb\r\nc é 🏃 👩\u200d💻")).toBe("a\tb\r\nc é 🏃 👩\u200d💻");
    expect(withControlsShown("\u001b[31mred\u0000\u007f\u0085\u202ex\u2066y\u2069")).toBe("\uFFFD[31mred\uFFFD\uFFFD\uFFFDx\uFFFDy\uFFFD");
  });
});
