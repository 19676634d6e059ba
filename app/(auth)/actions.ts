"use server";

import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { AuthError } from "next-auth";
import type { FormState } from "@/components/auth/auth-form";
import { actionClientAddress } from "@/lib/auth/action-address";
import { signIn, signOut } from "@/lib/auth/next-auth";
import { endSessionOf } from "@/lib/auth/session";
import { signInFailureMessage } from "@/lib/auth/signin-message";
import { withRefusals } from "@/lib/auth/signin-refusal";
import { signUpFromForm } from "@/lib/auth/sign-up";
import { EmailTakenError, SignUpRateLimited } from "@/lib/people/people";
import { SignInInput, SignUpInput } from "@/lib/people/schemas";
import { safeReturnPath } from "@/lib/http/safe-redirect";
import { errorText, log } from "@/lib/log";

function fieldErrors(issues: { path: PropertyKey[]; message: string }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of issues) out[String(i.path[0] ?? "form")] ??= i.message;
  return out;
}

async function signInOrMessage(email: string, password: string, returnTo: string): Promise<FormState> {
  // NEXT_REDIRECT (a successful sign-in carried onward) and real failures go on up; a refusal
  // comes back as Auth.js's error, with the wait its limit computed beside it.
  const { result: refused, refusal } = await withRefusals(async () => {
    try {
      await signIn("credentials", { email, password, redirectTo: returnTo });
      return undefined;
    } catch (err) {
      if (err instanceof AuthError) return err;
      throw err;
    }
  });
  if (!refused) return {};
  // A refused password says so; a database that cannot be reached says the service is
  // unavailable; any other failure of the server goes on up.
  const message = signInFailureMessage(refused, refusal?.retryAfterS);
  if (message === undefined) throw refused;
  return { error: message, values: { email } };
}

export async function signInAction(_prev: FormState, form: FormData): Promise<FormState> {
  const raw = { email: String(form.get("email") ?? ""), password: String(form.get("password") ?? "") };
  const parsed = SignInInput.safeParse(raw);
  if (!parsed.success) return { fieldErrors: fieldErrors(parsed.error.issues), values: { email: raw.email } };
  return signInOrMessage(parsed.data.email, parsed.data.password, safeReturnPath(form.get("callbackUrl")));
}

export async function signUpAction(_prev: FormState, form: FormData): Promise<FormState> {
  const raw = {
    name: String(form.get("name") ?? ""),
    email: String(form.get("email") ?? ""),
    password: String(form.get("password") ?? ""),
    timezone: String(form.get("timezone") ?? ""),
  };
  const values = { name: raw.name, email: raw.email };
  const parsed = SignUpInput.safeParse(raw);
  if (!parsed.success) return { fieldErrors: fieldErrors(parsed.error.issues), values };
  try {
    await signUpFromForm(parsed.data, actionClientAddress(await headers()));
  } catch (err) {
    if (err instanceof EmailTakenError) return { fieldErrors: { email: err.message }, values };
    if (err instanceof SignUpRateLimited) return { error: err.message, values };
    throw err;
  }
  return signInOrMessage(parsed.data.email, parsed.data.password, safeReturnPath(form.get("callbackUrl")));
}

/**
 * Signs out: the console session ends on the server first (so no copy of the cookie signs
 * anyone in), then Auth.js clears the cookie. If the database does not answer, the person stays
 * signed in and the sign-out page says so, rather than the cookie going while its session stays.
 */
export async function signOutAction(): Promise<void> {
  try {
    await endSessionOf((await headers()).get("cookie"));
  } catch (err) {
    log.error("sign-out could not end the console session", { error: errorText(err) });
    redirect("/signout?error=unavailable");
  }
  await signOut({ redirectTo: "/signin" });
}
