import "server-only";
import { hash, verify } from "@node-rs/argon2";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { inTransaction, type Tx } from "../db/transaction";
import { athleteProfiles, users } from "../db/schema";
import { consumeRateLimit } from "../http/rate-limit";
import { newId } from "../ids";
import type { SignUp } from "./schemas";

// argon2id with OWASP's recommended minimum (19 MiB, 2 passes).
const ARGON2 = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

export type Person = Pick<typeof users.$inferSelect, "id" | "email" | "name">;

export class EmailTakenError extends Error {
  constructor() {
    super("An account with this email already exists.");
  }
}

type NewPerson = { email: string; name: string; passwordHash: string };

/** The person's rows, written in the caller's transaction. */
async function createPerson(tx: Tx, person: NewPerson, profile: Partial<typeof athleteProfiles.$inferInsert>): Promise<Person> {
  const [user] = await tx
    .insert(users)
    .values({ id: newId("ath"), ...person })
    .onConflictDoNothing({ target: users.email })
    .returning();
  if (!user) throw new EmailTakenError();
  await tx.insert(athleteProfiles).values({
    trialEndsAt: new Date(Date.now() + 30 * 86_400_000),
    ...profile,
    userId: user.id,
  });
  return { id: user.id, email: user.email, name: user.name };
}

/**
 * Creates a person with an athlete profile: a 30-day trial, metric units, UTC until they
 * choose. The password is hashed first, so argon2's time holds no transaction.
 */
export async function signUp(
  db: Db,
  input: SignUp,
  profile: Partial<typeof athleteProfiles.$inferInsert> = {},
): Promise<Person> {
  const passwordHash = await hashPassword(input.password);
  return inTransaction(db, (tx) => createPerson(tx, { email: input.email, name: input.name, passwordHash }, profile));
}

export class SignUpRateLimited extends Error {
  constructor(readonly retryAfterS: number) {
    super("Too many accounts were created from your network. Wait a few minutes and try again.");
  }
}

/**
 * Sign-up as the /signup form does it: counted against the source address's windows (CONTRACT
 * §10's, as for the API) before the password is hashed, so no one can make the service run
 * argon2 for them without limit.
 */
export async function signUpFrom(db: Db, input: SignUp, address: string): Promise<Person> {
  const source = await consumeRateLimit(db, `signup-addr:${address}`);
  if (source.exceeded) throw new SignUpRateLimited(source.exceeded.resetS);
  return signUp(db, input, input.timezone ? { timezone: input.timezone } : {});
}

// Verifying against this when the email is unknown keeps both paths equally slow.
let dummyHash: Promise<string> | undefined;

/** The person whose email and password these are, or null. Constant work whether or not the email exists. */
export async function verifyCredentials(db: Db, email: string, password: string): Promise<Person | null> {
  const [user] = await db.select().from(users).where(eq(users.email, email.toLowerCase())).limit(1);
  if (!user) {
    await verify((await (dummyHash ??= hashPassword("not-a-real-password"))), password).catch(() => false);
    return null;
  }
  const ok = await verify(user.passwordHash, password).catch(() => false);
  return ok ? { id: user.id, email: user.email, name: user.name } : null;
}
