import "server-only";
import NextAuth, { CredentialsSignin } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { getDb } from "../db/client";
import { clientAddress } from "../http/client-address";
import { safeReturnPath } from "../http/safe-redirect";
import { authSecret } from "../secrets";
import { AUTH_PAGES, logAuthError } from "./auth-pages";
import { checkedSessionToken, endConsoleSession, sessionUserOf } from "./console-sessions";
import { checkSignIn, type SignInRefusal } from "./credentials";
import { secureSessionCookie, sessionCookieConfig } from "./session";
import { noteRefusal } from "./signin-refusal";

export class InvalidCredentials extends CredentialsSignin {
  code = "invalid_credentials";
}
export class TooManyAttempts extends CredentialsSignin {
  code = "too_many_attempts";
}
export class SourceRateLimited extends CredentialsSignin {
  code = "rate_limited";
}

const REFUSALS: Record<SignInRefusal, new () => CredentialsSignin> = {
  invalid_credentials: InvalidCredentials,
  too_many_attempts: TooManyAttempts,
  rate_limited: SourceRateLimited,
};

/**
 * Where a visitor who is not signed in is sent: the sign-in page, which brings them back to
 * `returnTo` (a path of this service) afterwards. Pages and actions redirect there themselves:
 * lib decides, app/ redirects.
 */
export function signInPath(returnTo: string): string {
  return `${AUTH_PAGES.signIn}?callbackUrl=${encodeURIComponent(returnTo)}`;
}

// Lazy configuration: the secret is read (or generated under DATA_DIR) on the first request,
// not when `next build` imports this module.
export const { handlers, auth, signIn, signOut } = NextAuth(() => ({
  secret: authSecret(),
  trustHost: true,
  // The cookie's name and `Secure` follow BASE_URL's scheme, not a proxy's X-Forwarded-Proto
  // (lib/auth/session.ts reads the same one).
  useSecureCookies: secureSessionCookie(),
  cookies: sessionCookieConfig(),
  session: { strategy: "jwt", maxAge: 30 * 86_400 },
  pages: AUTH_PAGES,
  logger: { error: logAuthError },
  providers: [
    Credentials({
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      // Both ways in land here: the sign-in form's server action and a direct POST to
      // /api/auth/callback/credentials. `request` carries the caller's headers either way.
      async authorize(raw, request) {
        const outcome = await checkSignIn(await getDb(), raw, clientAddress(request));
        if (!outcome.ok) {
          noteRefusal({ reason: outcome.reason, retryAfterS: outcome.retryAfterS });
          throw new REFUSALS[outcome.reason]();
        }
        const { person } = outcome;
        return { id: person.id, email: person.email, name: person.name };
      },
    }),
  ],
  events: {
    // Signing out ends the session where it is kept, not only in this browser.
    async signOut(message) {
      if ("token" in message) await endConsoleSession(await getDb(), message.token?.sid);
    },
  },
  callbacks: {
    // Where Auth.js sends the browser after signing in or out: only ever a path of this
    // service (on the origin the request came to), whatever callbackUrl arrived in the form,
    // query or cookie. Auth.js's default accepts any string that starts with "/".
    redirect({ url, baseUrl }) {
      const path = url.startsWith(`${baseUrl}/`) ? url.slice(baseUrl.length) : url;
      return `${baseUrl}${safeReturnPath(path)}`;
    },
    // Every reading of a session comes here (Auth.js's `auth()` and its session endpoint).
    jwt({ token, user }) {
      return checkedSessionToken(getDb, token, user?.id);
    },
    session({ session, token }) {
      const uid = sessionUserOf(token);
      if (uid) session.user.id = uid;
      return session;
    },
  },
}));

/** The signed-in person's id, or null. */
export async function currentUserId(): Promise<string | null> {
  const session = await auth();
  return session?.user?.id ?? null;
}
