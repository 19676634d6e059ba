import { crc32 } from "node:zlib";
import { BASE62, randomBase62 } from "../crypto/random";

export const TOKEN_PREFIXES = {
  pat: "aas_pat_",
  refresh: "aas_rt_",
  clientSecret: "aas_cs_",
  webhookSecret: "whsec_",
} as const;
export type TokenKind = keyof typeof TOKEN_PREFIXES;

const BODY_LENGTH = 32; // 32 base62 characters: 190 random bits (>= 178).
const CHECKSUM_LENGTH = 6;

function base62Checksum(text: string): string {
  let n = crc32(text) >>> 0;
  let out = "";
  do {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(CHECKSUM_LENGTH, "0");
}

/**
 * A new secret: prefix, random body, and the CRC-32 of both in base62, so a scanner can
 * tell a real token from a typo without a lookup.
 * @see https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/
 */
export function generateToken(kind: TokenKind): string {
  const head = TOKEN_PREFIXES[kind] + randomBase62(BODY_LENGTH);
  return head + base62Checksum(head);
}

/** True when `token` has the kind's prefix, a body of at least 30 base62 characters and a valid checksum. */
export function isWellFormedToken(token: string, kind: TokenKind): boolean {
  const prefix = TOKEN_PREFIXES[kind];
  if (!token.startsWith(prefix) || token.length > 200) return false;
  const rest = token.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(rest) || rest.length < 30 + CHECKSUM_LENGTH) return false;
  const head = token.slice(0, -CHECKSUM_LENGTH);
  return base62Checksum(head) === token.slice(-CHECKSUM_LENGTH);
}
