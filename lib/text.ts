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
 * `text` kept whole but for what would act on its reader's screen instead of being seen: NUL
 * dropped (PostgreSQL text cannot hold it), every other control character but tab and line
 * breaks (an escape sequence recolours a terminal) and every bidi override or isolate (it
 * reorders the text around it) shown as U+FFFD. For text someone else wrote that is shown as it
 * came, line breaks and all (an endpoint's answer in the delivery log); printableExcerpt is for
 * a one-line quote.
 */
export function withControlsShown(text: string): string {
  return text.replaceAll("\u0000", "").replace(/[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "\uFFFD");
}

/**
 * The start of `text`, at most `max` characters counted as code points (as a zod 4 schema's
 * `.max()` counts them, and PostgreSQL's varchar), cut between code points: never in the middle
 * of an emoji's surrogate pair, which would leave a lone surrogate (stored, it reads back as U+FFFD).
 */
export function firstCharacters(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join("");
}

/**
 * A character text shown to people must not hold: a control, a format character (bidi
 * overrides and isolates, which make the text around it read backwards; zero-width characters,
 * which hide a lookalike), any other character Unicode says to draw as nothing (a combining
 * grapheme joiner, variation selectors, Hangul fillers), the Braille blank, a private-use or
 * unassigned code point, a lone surrogate, or a line or paragraph separator.
 */
const HIDDEN = String.raw`[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]`;

/** The scripts whose writing needs ZWNJ or ZWJ between letters (Persian and Kurdish in Arabic script, the Indic scripts). */
const ZWNJ_SCRIPT = String.raw`[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}]`;

/**
 * In a name, the few hidden characters writing needs where they hide nothing: the tags of a
 * subdivision flag after its black flag ("🏴" + g b s c t + cancel tag: Scotland's), ZWJ inside an
 * emoji sequence ("👩‍💻"), a variation selector right after an emoji ("❤️"), ZWNJ or ZWJ
 * between letters of a script that uses them, vowel marks after the first letter included
 * (Persian "می‌خواهم", Indic half-forms and conjuncts).
 */
const IN_PLACE = String.raw`(?<=\u{1F3F4}[\u{E0020}-\u{E007E}]*)[\u{E0020}-\u{E007F}]|(?<=[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F])\u200D(?=\p{Extended_Pictographic})|(?<=\p{Emoji})[\uFE0E\uFE0F]|(?<=${ZWNJ_SCRIPT}\p{M}*)[\u200C\u200D](?=${ZWNJ_SCRIPT})`;

// Combining marks at the start combine with nothing: a name of them alone looks empty.
const NAME_SCAN = new RegExp(`(${IN_PLACE})|${HIDDEN}|^\\p{M}+`, "gu");
const STRICT_SCAN = new RegExp(HIDDEN, "u");

/**
 * Whether `text` holds a hidden character (HIDDEN): in a name, but for the ones writing needs
 * in place (IN_PLACE); with `strict` (a URL, where nothing hidden belongs), any.
 */
export function hasHiddenCharacters(text: string, { strict = false } = {}): boolean {
  return strict ? STRICT_SCAN.test(text) : stripHiddenCharacters(text) !== text;
}

/** `text` without its hidden characters, but for those a name keeps in place (a file's name, say). */
export function stripHiddenCharacters(text: string): string {
  return text.replace(NAME_SCAN, (_, kept: string | undefined) => kept ?? "");
}

/** What a name holding hidden characters is told (the name fields' shared refinement). */
export const HIDDEN_IN_NAME_MESSAGE = "use letters, digits, spaces and punctuation: no control, bidi or zero-width characters";
