import { randomInt } from "node:crypto";

const SUFFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const SUFFIX_LENGTH = 6;
const MAX_SLUG_LENGTH = 32;

/** Latin letters that Unicode decomposition leaves alone. */
const FOLD: Record<string, string> = { ø: "o", æ: "ae", œ: "oe", ß: "ss", đ: "d", ł: "l", þ: "th" };

/** The app's name as a URL-safe slug: lowercase ASCII letters, digits and single hyphens. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[øæœßđłþ]/g, (c) => FOLD[c]!)
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length <= MAX_SLUG_LENGTH) return slug || "app";
  return slug.slice(0, MAX_SLUG_LENGTH).replace(/-[^-]*$/, "").replace(/-+$/, "") || slug.slice(0, MAX_SLUG_LENGTH);
}

/**
 * A new client_id: the name's slug and six random characters (`training-log-k3q9zt`).
 * Readable where developers meet it (their config, authorize URLs, logs, this console's URLs)
 * and never the bare name, so nobody can claim `strava` or a well-known app's id; the suffix
 * makes collisions rare, and the insert retries on the rare one. It stays the same when the
 * app is renamed. client_id is public (RFC 6749 §2.2): the secret, not the id, authenticates.
 */
export function newClientId(name: string): string {
  let suffix = "";
  for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return `${slugify(name)}-${suffix}`;
}
