import "server-only";
import type { z } from "zod";
import { getDb } from "../db/client";
import { signUpFrom, type Person } from "../people/people";
import type { athleteProfiles } from "../db/schema";
import type { SignUpInput } from "../people/schemas";

/**
 * The /signup form's verb. The database is opened here, as Auth.js's sign-in does in
 * next-auth.ts, so the server action never touches it.
 */
export async function signUpFromForm(
  input: z.output<typeof SignUpInput>,
  address: string,
  profile: Partial<Pick<typeof athleteProfiles.$inferInsert, "timezone">> = {},
): Promise<Person> {
  return signUpFrom(await getDb(), input, address, profile);
}
