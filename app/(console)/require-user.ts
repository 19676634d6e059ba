import "server-only";
import { redirect } from "next/navigation";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

/** The signed-in person's id; otherwise off to sign-in, coming back to `returnTo`. */
export async function requireUserId(returnTo: string): Promise<string> {
  const id = await currentUserId();
  if (!id) redirect(signInPath(returnTo));
  return id;
}
