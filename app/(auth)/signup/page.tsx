import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthForm } from "@/components/auth/auth-form";
import { currentUserId } from "@/lib/auth/next-auth";
import { safeReturnPath } from "@/lib/http/safe-redirect";
import { signUpAction } from "../actions";

export const metadata: Metadata = { title: "Sign up" };

export default async function SignUpPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string }> }) {
  const { callbackUrl } = await searchParams;
  const returnTo = safeReturnPath(callbackUrl);
  if (await currentUserId()) redirect(returnTo);
  return (
    <>
      <h1 className="mb-4 text-xl font-semibold">Create an account</h1>
      <AuthForm mode="signup" action={signUpAction} callbackUrl={callbackUrl ? returnTo : undefined} />
    </>
  );
}
