import { z } from "zod";
import { ScopeSchema } from "../auth/scopes";

export const PAT_EXPIRY_DAYS = [7, 30, 90, 365] as const;

export const CreatePatInput = z.strictObject({
  name: z.string().trim().min(1, "give the token a name").max(100),
  scopes: z.array(ScopeSchema).min(1, "choose at least one scope").max(20),
  /** Days until it expires, or null for a token that lasts until revoked. */
  expires_in_days: z.union([z.literal(7), z.literal(30), z.literal(90), z.literal(365)]).nullable(),
});

export type PatSummary = {
  id: string;
  name: string;
  /** `aas_pat_…abcd`: the prefix and last four characters, all a list ever shows. */
  display: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
};
