import "server-only";
import { redirect } from "next/navigation";
import { currentUserId } from "./next-auth";

/** The signed-in person's id; otherwise off to sign-in, coming back to `returnTo`. */
export async function requireUserId(returnTo: string): Promise<string> {
  const id = await currentUserId();
  if (!id) redirect(`/signin?callbackUrl=${encodeURIComponent(returnTo)}`);
  return id;
}
