import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { auth } from "@/lib/auth/next-auth";
import { getDb } from "@/lib/db/client";
import { prepareAuthorization, validateAuthorizationRequest } from "@/lib/oauth/authorize";
import { AUTHORIZE_PARAMS, readAuthorizeParams } from "@/lib/oauth/authorize-checks";
import { SCOPES } from "@/lib/auth/scopes";
import { ConsentScreen, AuthorizeError } from "@/components/oauth/consent-screen";
import { decideAction } from "./actions";

export const metadata: Metadata = { title: "Authorize app" };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * An error in a request from a verified app that the athlete has not trusted: shown, with the
 * way back as a link the athlete chooses to follow, never an automatic redirect (RFC 9700 §4.11.2).
 */
function ReturnToApp({ appName, message, returnUrl, returnHost }: { appName: string; message: string; returnUrl: string; returnHost: string }) {
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-md rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-xl font-semibold">{appName} sent a request that cannot be used</h1>
        <p className="mt-3 text-sm text-slate-700">{message}</p>
        <p className="mt-3 text-sm text-slate-600">Nothing was shared. Only go back if you trust the site you came from.</p>
        <p className="mt-4 text-sm">
          <a href={returnUrl} rel="noreferrer" className="text-brand-600 hover:underline">
            Return to {returnHost}
          </a>
        </p>
      </div>
    </main>
  );
}

// GET /oauth/authorize: the authorization endpoint (RFC 6749 §4.1.1) and its consent screen.
export default async function AuthorizePage({ searchParams }: Props) {
  const { params, repeated, query } = readAuthorizeParams(await searchParams);
  const db = await getDb();
  // Unknown client or redirect URI: shown here, never redirected.
  const checked = await validateAuthorizationRequest(db, params, repeated);
  if (!checked.ok && checked.step.kind === "error_page") return <AuthorizeError message={checked.step.message} />;
  // Nothing goes back to the app before the athlete is signed in (RFC 9700 §4.11.2).
  const session = await auth();
  const userId = session?.user?.id;
  if (!userId) redirect(`/signin?callbackUrl=${encodeURIComponent(`/oauth/authorize?${query}`)}`);
  const step = await prepareAuthorization(db, params, repeated, userId);
  if (step.kind === "redirect") redirect(step.url);
  if (step.kind === "error_page") return <AuthorizeError message={step.message} />;
  if (step.kind === "error_return") return <ReturnToApp {...step} />;
  const hidden = Object.fromEntries(AUTHORIZE_PARAMS.flatMap((n) => (params[n] !== undefined ? [[n, params[n]!]] : [])));
  return (
    <ConsentScreen
      app={step.request.client}
      account={session?.user?.email ?? ""}
      newScopes={step.newScopes.map((s) => ({ name: s, plain: SCOPES[s].plain }))}
      grantedScopes={step.grantedScopes.map((s) => ({ name: s, plain: SCOPES[s].plain }))}
      redirectHost={new URL(step.request.redirectUri).host}
      hidden={hidden}
      action={decideAction}
    />
  );
}
