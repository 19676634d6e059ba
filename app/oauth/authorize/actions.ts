"use server";

import { redirect } from "next/navigation";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";
import { consentAnswer, SHOWN_TO_FIELD } from "@/lib/oauth/authorize-page";
import { AUTHORIZE_PARAMS, type AuthorizeParams } from "@/lib/oauth/authorize-checks";

/**
 * The consent form's answer. Server actions refuse cross-origin posts (Next.js compares
 * Origin with Host), and the request is validated again from scratch.
 */
export async function decideAction(form: FormData): Promise<void> {
  const params: AuthorizeParams = {};
  for (const name of AUTHORIZE_PARAMS) {
    const v = form.get(name);
    if (typeof v === "string") params[name] = v;
  }
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const userId = await currentUserId();
  if (!userId) redirect(signInPath(`/oauth/authorize?${query}`));
  const decision = form.get("decision") === "allow" ? "allow" : "deny";
  const shownTo = form.get(SHOWN_TO_FIELD);
  // Asked again (the screen shown to whoever is signed in now) unless it was this person's.
  const step = await consentAnswer(params, userId, decision, typeof shownTo === "string" ? shownTo : null);
  if (step.kind === "redirect") redirect(step.url);
  redirect(`/oauth/authorize?${query}`);
}
