import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Button } from "@/components/ui/button";
import { auth } from "@/lib/auth/next-auth";
import { signOutAction } from "../actions";

export const metadata: Metadata = { title: "Sign out" };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * Auth.js's sign-out page (GET /api/auth/signout lands here): the console's look, one button;
 * and where a sign-out that could not end the session on the server comes back to, saying so.
 */
export default async function SignOutPage({ searchParams }: Props) {
  const session = await auth();
  if (!session?.user) redirect("/signin");
  const failed = (await searchParams).error === "unavailable";
  return (
    <>
      <h1 className="mb-2 text-xl font-semibold">Sign out</h1>
      {failed && (
        <p role="alert" className="mb-4 rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800">
          Signing out did not reach the server, so this browser is still signed in. Try again in a moment.
        </p>
      )}
      <p className="mb-4 text-sm text-slate-600">
        You are signed in{session.user.email ? ` as ${session.user.email}` : ""}. Sign out of the console on this browser?
      </p>
      <form action={signOutAction}>
        <Button type="submit" className="w-full">
          Sign out
        </Button>
      </form>
    </>
  );
}
