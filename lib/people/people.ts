import "server-only";
import { hash, verify } from "@node-rs/argon2";
import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../db/client";
import { athleteProfiles, users } from "../db/schema";
import { newId } from "../ids";
import type { SignUpInput } from "./schemas";

// argon2id with OWASP's recommended minimum (19 MiB, 2 passes).
const ARGON2 = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

export type Person = { id: string; email: string; name: string | null };

export class EmailTakenError extends Error {
  constructor() {
    super("An account with this email already exists.");
  }
}

/** Creates a person with an athlete profile: a 30-day trial, metric units, UTC until they choose. */
export async function signUp(
  db: Db,
  input: z.output<typeof SignUpInput>,
  profile: Partial<typeof athleteProfiles.$inferInsert> = {},
): Promise<Person> {
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ id: newId("ath"), email: input.email, name: input.name, passwordHash })
      .onConflictDoNothing({ target: users.email })
      .returning();
    if (!user) throw new EmailTakenError();
    await tx.insert(athleteProfiles).values({
      trialEndsAt: new Date(Date.now() + 30 * 86_400_000),
      ...profile,
      userId: user.id,
    });
    return { id: user.id, email: user.email, name: user.name };
  });
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
