import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthForm } from "@/components/auth/auth-form";
import { currentUserId } from "@/lib/auth/next-auth";
import { signInErrorMessage } from "@/lib/auth/signin-message";
import { getEnv } from "@/lib/env";
import { safeReturnPath } from "@/lib/http/safe-redirect";
import { signInAction } from "../actions";

export const metadata: Metadata = { title: "Sign in" };

type Query = { callbackUrl?: string; error?: string; code?: string };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Query> }) {
  const { callbackUrl, error, code } = await searchParams;
  const returnTo = safeReturnPath(callbackUrl);
  if (await currentUserId()) redirect(returnTo);
  return (
    <>
      <h1 className="mb-4 text-xl font-semibold">Sign in</h1>
      <AuthForm
        mode="signin"
        action={signInAction}
        callbackUrl={callbackUrl ? returnTo : undefined}
        demo={getEnv().seedDemo}
        // Auth.js's own error page is this one (lib/auth/next-auth.ts, AUTH_PAGES).
        error={signInErrorMessage(error, code) ?? undefined}
      />
    </>
  );
}
