import { z } from "zod";
import { HIDDEN_IN_NAME_MESSAGE, hasHiddenCharacters } from "../text";
import { ScopeSchema } from "../auth/scopes";

export const PAT_EXPIRY_DAYS = [7, 30, 90, 365] as const;
/** The longest token name, in characters (the console's field holds no more). */
export const PAT_NAME_MAX_LENGTH = 100;

export const CreatePatInput = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, "give the token a name")
    .max(PAT_NAME_MAX_LENGTH, `use at most ${PAT_NAME_MAX_LENGTH} characters`)
    // Shown in the token list beside its last characters: a bidi override would make it read as another.
    .refine((name) => !hasHiddenCharacters(name), HIDDEN_IN_NAME_MESSAGE),
  scopes: z.array(ScopeSchema).min(1, "choose at least one scope").max(20, "choose at most 20 scopes"),
  /** Days until it expires, or null for a token that lasts until revoked. */
  expires_in_days: z.union([z.literal(7), z.literal(30), z.literal(90), z.literal(365)]).nullable(),
});

export const PatSummary = z.object({
  id: z.string(),
  name: z.string(),
  /** `aas_pat_…abcd`: the prefix and last four characters, all a list ever shows. */
  display: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type PatSummary = z.output<typeof PatSummary>;

/** A new token: the secret, shown only in this answer, and what lists will show of it. */
export const CreatedPat = z.object({ token: z.string(), summary: PatSummary });
