import "server-only";
import { getDb } from "../db/client";
import { signUpFrom, type Person } from "../people/people";
import type { SignUp } from "../people/schemas";

/**
 * The /signup form's verb. The database is opened here, as Auth.js's sign-in does in
 * next-auth.ts, so the server action never touches it.
 */
export async function signUpFromForm(input: SignUp, address: string): Promise<Person> {
  return signUpFrom(await getDb(), input, address);
}
