/**
 * At most `max` characters of `text` that are safe to show and to store anywhere: control
 * (NUL included, which PostgreSQL text cannot hold), format (bidi overrides, zero-width),
 * private-use and unassigned characters, lone surrogates, undecodable bytes (U+FFFD) and runs of
 * white space each become one space; a cut is marked with "…" within the `max`.
 */
export function printableExcerpt(text: string, max: number): string {
  const clean = text.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\uFFFD\s]+/gu, " ").trim();
  const chars = Array.from(clean);
  return chars.length > max ? `${chars.slice(0, max - 1).join("").trimEnd()}…` : clean;
}

/**
 * Whether `text` holds a character a name shown to people must not: a control, a format
 * character (bidi overrides and isolates, which make the text around a name read backwards;
 * zero-width characters, which hide a lookalike), a private-use or unassigned code point, or a
 * line or paragraph separator.
 */
export function hasHiddenCharacters(text: string): boolean {
  return new RegExp(HIDDEN_CHARACTERS.source, "u").test(text.replace(JOINERS_IN_PLACE, ""));
}

/**
 * The two joiners where writing needs them, and where they hide nothing: ZWJ inside an emoji
 * sequence ("👩‍💻"), ZWNJ between letters of a script other than Latin, Greek or Cyrillic
 * (Persian "می‌خواهم", Indic conjuncts). Between Latin letters either would hide a lookalike.
 */
const JOINERS_IN_PLACE =
  /(?<=[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F])\u200D(?=\p{Extended_Pictographic})|(?<=[\p{L}\p{M}](?<![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]))\u200C(?=\p{L}(?<![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]))/gu;

/** Every character `hasHiddenCharacters` looks for, lone surrogates too (global: for `replace`). */
export const HIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu;
