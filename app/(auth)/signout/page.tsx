import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Button } from "@/components/ui/button";
import { auth } from "@/lib/auth/next-auth";
import { signOutAction } from "../actions";

export const metadata: Metadata = { title: "Sign out" };

/** Auth.js's sign-out page (GET /api/auth/signout lands here): the console's look, one button. */
export default async function SignOutPage() {
  const session = await auth();
  if (!session?.user) redirect("/signin");
  return (
    <>
      <h1 className="mb-2 text-xl font-semibold">Sign out</h1>
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
