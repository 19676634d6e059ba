import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { auth, signInPath } from "@/lib/auth/next-auth";
import { authorizePageStep, SHOWN_TO_FIELD } from "@/lib/oauth/authorize-page";
import { AUTHORIZE_PARAMS, readAuthorizeParams, redirectDestination } from "@/lib/oauth/authorize-checks";
import { SCOPES } from "@/lib/auth/scopes";
import { ConsentScreen, AuthorizeError, ReturnToApp } from "@/components/oauth/consent-screen";
import { decideAction } from "./actions";

export const metadata: Metadata = { title: "Authorize app" };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

// GET /oauth/authorize: the authorization endpoint (RFC 6749 §4.1.1) and its consent screen.
export default async function AuthorizePage({ searchParams }: Props) {
  const { params, repeated, query } = readAuthorizeParams(await searchParams);
  const session = await auth();
  // Unknown client or redirect URI: shown, never redirected. Nothing goes back to the app
  // before the athlete is signed in (RFC 9700 §4.11.2): lib/oauth/authorize.ts decides.
  const step = await authorizePageStep(params, repeated, session?.user?.id ?? null);
  if (step.kind === "sign_in") redirect(signInPath(`/oauth/authorize?${query}`));
  if (step.kind === "redirect") redirect(step.url);
  if (step.kind === "error_page") return <AuthorizeError message={step.message} />;
  if (step.kind === "error_return") return <ReturnToApp {...step} />;
  const hidden = Object.fromEntries(AUTHORIZE_PARAMS.flatMap((n) => (params[n] !== undefined ? [[n, params[n]!]] : [])));
  // Whose screen this is: an answer sent after someone else signed in (another tab) decides nothing.
  if (session?.user?.id) hidden[SHOWN_TO_FIELD] = session.user.id;
  return (
    <ConsentScreen
      app={step.request.client}
      account={session?.user?.email ?? ""}
      askedScopes={step.askedScopes.map((s) => ({ name: s, plain: SCOPES[s].plain }))}
      newScopes={step.newScopes.map((s) => ({ name: s, plain: SCOPES[s].plain }))}
      grantedScopes={step.grantedScopes.map((s) => ({ name: s, plain: SCOPES[s].plain }))}
      redirectHost={redirectDestination(step.request.redirectUri)}
      forAssistant={step.request.resource === "mcp"}
      coachedTeams={step.coachedTeams}
      hidden={hidden}
      action={decideAction}
    />
  );
}
