import { Auth, raw, skipCSRFCheck } from "@auth/core";
import { CredentialsSignin } from "@auth/core/errors";
import Credentials from "@auth/core/providers/credentials";
import { connect } from "node:net";
import { describe, expect, it, vi } from "vitest";

// The sign-in form's action with Auth.js's core in place of next-auth's `signIn` (next-auth
// calls the core so: `raw`, without the CSRF check), and `authorize` as each case sets it.
const state = vi.hoisted(() => ({ authorize: (async () => null) as () => Promise<unknown> }));
vi.mock("@/lib/auth/next-auth", () => ({
  signOut: async () => {},
  signIn: async (_provider: string, fields: Record<string, string>) => {
    const request = new Request("http://localhost:3000/api/auth/callback/credentials", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: fields.email!, password: fields.password! }),
    });
    return Auth(request, {
      secret: "a-test-secret-of-enough-length-000000",
      trustHost: true,
      basePath: "/api/auth",
      raw,
      skipCSRFCheck,
      logger: { error: () => {} },
      providers: [Credentials({ credentials: { email: {}, password: {} }, authorize: () => state.authorize() as never })],
    });
  },
}));
// next-auth's AuthError is Auth.js's (its package needs Next.js's server to load).
vi.mock("next-auth", async () => ({ AuthError: (await import("@auth/core/errors")).AuthError }));
vi.mock("next/headers", () => ({ headers: async () => new Headers() }));

const { signInAction } = await import("./actions");

const form = (email: string, password: string) => {
  const f = new FormData();
  f.set("email", email);
  f.set("password", password);
  return f;
};

/**
 * What a query fails with while the database is down: postgres.js passes on its socket's error
 * (here a real one, from a port nobody listens on), and drizzle wraps it as the cause of its own.
 */
function databaseDown(): Promise<never> {
  return new Promise((_resolve, reject) => {
    const socket = connect(1, "127.0.0.1");
    socket.on("connect", () => socket.destroy());
    socket.on("error", (err) => reject(new Error("Failed query: select 1", { cause: err })));
  });
}

describe("the sign-in form's answer when signing in fails", () => {
  it("says the service is unavailable, not that the password is wrong, when the database cannot be reached", async () => {
    state.authorize = databaseDown;
    const answer = await signInAction({}, form("someone@example.com", "a-password-of-length"));
    expect(answer.error).toBe("The service is unavailable right now. Try again shortly.");
    expect(answer.error).not.toMatch(/do not match/);
    expect(answer.values).toEqual({ email: "someone@example.com" });
  });

  it("says the email and password do not match for a refused password, and only then", async () => {
    state.authorize = async () => {
      throw Object.assign(new CredentialsSignin(), { code: "invalid_credentials" });
    };
    const refused = await signInAction({}, form("someone@example.com", "a-password-of-length"));
    expect(refused.error).toBe("That email and password do not match an account.");
    // Any other failure of the server goes on up, never told as a wrong password.
    state.authorize = async () => {
      throw new TypeError("a bug");
    };
    await expect(signInAction({}, form("someone@example.com", "a-password-of-length"))).rejects.toThrow();
  });
});
