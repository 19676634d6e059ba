import "server-only";
import NextAuth, { CredentialsSignin } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { getDb } from "../db/client";
import { authSecret } from "../secrets";
import { SignInInput } from "../people/schemas";
import { verifyCredentials } from "../people/people";
import { recordFailedSignIn, signInLockout } from "./signin-guard";

export class InvalidCredentials extends CredentialsSignin {
  code = "invalid_credentials";
}
export class TooManyAttempts extends CredentialsSignin {
  code = "too_many_attempts";
}

// Lazy configuration: the secret is read (or generated under DATA_DIR) on the first request,
// not when `next build` imports this module.
export const { handlers, auth, signIn, signOut } = NextAuth(() => ({
  secret: authSecret(),
  trustHost: true,
  session: { strategy: "jwt", maxAge: 30 * 86_400 },
  pages: { signIn: "/signin" },
  logger: {
    // A wrong password is an expected outcome, not a server error worth a stack trace.
    error: (error: Error) => {
      if (!(error instanceof CredentialsSignin)) console.error(error);
    },
  },
  providers: [
    Credentials({
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(raw) {
        const parsed = SignInInput.safeParse(raw);
        if (!parsed.success) throw new InvalidCredentials();
        const db = await getDb();
        const { email, password } = parsed.data;
        if (await signInLockout(db, email)) throw new TooManyAttempts();
        const person = await verifyCredentials(db, email, password);
        if (!person) {
          await recordFailedSignIn(db, email);
          throw new InvalidCredentials();
        }
        return { id: person.id, email: person.email, name: person.name };
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user?.id) token.uid = user.id;
      return token;
    },
    session({ session, token }) {
      if (typeof token.uid === "string") session.user.id = token.uid;
      return session;
    },
  },
}));

/** The signed-in person's id, or null. */
export async function currentUserId(): Promise<string | null> {
  const session = await auth();
  return session?.user?.id ?? null;
}
