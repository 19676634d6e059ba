import { randomBase62 } from "./crypto/random";

export type IdPrefix = "ath" | "team" | "act" | "met" | "pat" | "evt" | "grt" | "fam" | "whd" | "wha" | "upl";

/** Prefixed identifiers: an id says what it is (`act_…` is an activity). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
