import type { Metadata } from "next";
import { cookies } from "next/headers";
import { ExchangePanel } from "@/components/demo/exchange-panel";
import { Notice } from "@/components/ui/notice";
import { safeEqual } from "@/lib/crypto/random";
import { DEMO_CLIENT_ID, DEMO_COOKIE, DEMO_SCOPES, decodeDemoCookie, demoRedirectUri } from "@/lib/demo-client/demo-client";
import { getEnv } from "@/lib/env";
import { exchangeCodeAction } from "./actions";

export const metadata: Metadata = { title: "Demo Training Log", robots: { index: false } };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

type Check = { ok: boolean | null; text: string };

function Row({ label, value, check }: { label: string; value: string | undefined; check?: Check }) {
  const tone = check?.ok === true ? "text-emerald-700" : check?.ok === false ? "text-red-700" : "text-slate-500";
  const mark = check?.ok === true ? "✓ " : check?.ok === false ? "✗ " : "";
  return (
    <div className="space-y-1">
      <dt className="text-sm font-medium text-slate-700">{label}</dt>
      <dd className="space-y-1">
        <code className="block break-all rounded bg-slate-100 px-2 py-1 font-mono text-sm">{value ?? "(none)"}</code>
        {check && (
          <p className={`text-xs ${tone}`}>
            {mark}
            {check.text}
          </p>
        )}
      </dd>
    </div>
  );
}

function StartLink({ again }: { again?: boolean }) {
  // A plain link, not next/link: /demo/start is a route handler that sets a cookie, never to be prefetched.
  return (
    <a
      href="/demo/start"
      className="inline-flex items-center justify-center rounded-md bg-brand-600 px-3.5 py-2 text-sm font-medium text-white shadow-sm hover:bg-brand-700 focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500 focus-visible:ring-offset-2"
    >
      {again ? "Start the demo again" : "Start the demo"}
    </a>
  );
}

// GET /demo/callback: where the demo confidential app lands after consent (CONTRACT §9).
export default async function DemoCallbackPage({ searchParams }: Props) {
  const q = await searchParams;
  const code = one(q.code);
  const state = one(q.state);
  const iss = one(q.iss);
  const error = one(q.error);
  const errorDescription = one(q.error_description);
  const flow = decodeDemoCookie((await cookies()).get(DEMO_COOKIE)?.value);
  const issuer = getEnv().baseUrl;
  // Shown here and enforced again by the exchange.
  const stateCheck = flow
    ? state !== undefined && safeEqual(state, flow.state)
      ? { ok: true as const, text: "Matches the state this browser sent." }
      : { ok: false as const, text: "Does not match the state this browser sent: do not trust this response." }
    : { ok: null, text: "Checked against the state in this browser's cookie when the code is exchanged." };
  const issCheck =
    iss === issuer
      ? { ok: true, text: "Matches this service's issuer (RFC 9207)." }
      : { ok: false, text: `Expected ${issuer} (RFC 9207): do not trust this response.` };

  return (
    <div className="min-h-screen">
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-3xl flex-wrap items-baseline justify-between gap-2 px-4 py-3">
          <p className="font-semibold text-emerald-700">Demo Training Log</p>
          <p className="text-xs text-slate-500">an example app that connects to the Athlete Activity Service</p>
        </div>
      </header>
      <main className="mx-auto max-w-3xl space-y-6 px-4 py-8">
        {!code && !error && (
          <section className="space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
            <h1 className="text-2xl font-semibold tracking-tight">Walk the OAuth flow</h1>
            <p className="text-sm text-slate-700">
              This page plays a server-side app, <code>{DEMO_CLIENT_ID}</code>. Starting the demo makes a PKCE verifier and a state, keeps
              them in a cookie for this browser, and sends you to the service to sign in and allow access to{" "}
              {DEMO_SCOPES.map((s, i) => (
                <span key={s}>
                  {i === 0 ? "" : i === DEMO_SCOPES.length - 1 ? " and " : ", "}
                  <code>{s}</code>
                </span>
              ))}
              . You come back here with a code, which the app exchanges for tokens and uses to read your profile.
            </p>
            <p className="text-sm text-slate-600">
              Sign in with a demo athlete, such as <strong>ava@example.com</strong> / <strong>demo-password</strong>.
            </p>
            <StartLink />
          </section>
        )}

        {error && (
          <section className="space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
            <h1 className="text-2xl font-semibold tracking-tight">The authorization did not go through</h1>
            <Notice tone={error === "access_denied" ? "warning" : "error"}>
              {error === "access_denied" ? "You chose Deny, so the app received no access." : "The service answered with an error."}
            </Notice>
            <dl className="space-y-3">
              <Row label="error" value={error} />
              {errorDescription && <Row label="error_description" value={errorDescription} />}
              <Row label="state" value={state} check={flow ? stateCheck : undefined} />
              <Row label="iss" value={iss} check={issCheck} />
            </dl>
            <StartLink again />
          </section>
        )}

        {code && !error && (
          <section className="space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
            <h1 className="text-2xl font-semibold tracking-tight">A code arrived</h1>
            <p className="text-sm text-slate-700">
              The service sent you back to <code className="break-all">{demoRedirectUri()}</code> with these parameters. The app checks the
              state and the issuer, then exchanges the code on its server, with its client secret and the PKCE verifier. The code works once,
              within 60 seconds.
            </p>
            <dl className="space-y-3">
              <Row label="code" value={code} />
              <Row label="state" value={state} check={stateCheck} />
              <Row label="iss" value={iss} check={issCheck} />
            </dl>
            <ExchangePanel code={code} state={state ?? ""} iss={iss ?? ""} action={exchangeCodeAction} />
            <StartLink again />
          </section>
        )}
      </main>
    </div>
  );
}
