"use server";

import { headers } from "next/headers";
import { AuthError } from "next-auth";
import type { FormState } from "@/components/auth/auth-form";
import { actionClientAddress } from "@/lib/auth/action-address";
import { signIn, signOut } from "@/lib/auth/next-auth";
import { signUpFromForm } from "@/lib/auth/sign-up";
import { EmailTakenError, SignUpRateLimited } from "@/lib/people/people";
import { SignInInput, SignUpInput } from "@/lib/people/schemas";
import { safeReturnPath } from "@/lib/http/safe-redirect";

function fieldErrors(issues: { path: PropertyKey[]; message: string }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of issues) out[String(i.path[0] ?? "form")] ??= i.message;
  return out;
}

const MESSAGES: Record<string, string> = {
  invalid_credentials: "That email and password do not match an account.",
  too_many_attempts: "Too many failed attempts for this email. Wait 15 minutes and try again.",
  rate_limited: "Too many sign-in attempts from your network. Wait a few minutes and try again.",
};

async function signInOrMessage(email: string, password: string, returnTo: string): Promise<FormState> {
  try {
    await signIn("credentials", { email, password, redirectTo: returnTo });
  } catch (err) {
    if (err instanceof AuthError) {
      const code = (err as AuthError & { code?: string }).code ?? "";
      return { error: MESSAGES[code] ?? MESSAGES.invalid_credentials, values: { email } };
    }
    throw err; // NEXT_REDIRECT carries the successful sign-in onward
  }
  return {};
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

export async function signOutAction(): Promise<void> {
  await signOut({ redirectTo: "/signin" });
}
