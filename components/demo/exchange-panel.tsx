"use client";

import { useActionState } from "react";
import { Button } from "@/components/ui/button";
import { Notice } from "@/components/ui/notice";
import type { ExchangeState, HttpResult } from "@/lib/demo-client/demo-client";
import { ScrollRegion } from "@/components/ui/scroll-region";

function Json({ title, result }: { title: string; result: HttpResult }) {
  const ok = result.status >= 200 && result.status < 300;
  return (
    <section className="space-y-1">
      <h2 className="text-sm font-medium">
        {title}{" "}
        <span className={`ml-1 rounded px-1.5 py-0.5 text-xs ${ok ? "bg-emerald-50 text-emerald-700" : "bg-red-50 text-red-700"}`}>{result.status}</span>
      </h2>
      <ScrollRegion as="pre" label={`${title}: answer`} className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-900 p-3 text-xs text-slate-100">
        {JSON.stringify(result.body, null, 2)}
      </ScrollRegion>
    </section>
  );
}

/** The "Exchange code" button and what came back: the token response, then GET /v1/athletes/me with the token. */
export function ExchangePanel({
  code,
  state,
  iss,
  action,
}: {
  code: string;
  state: string;
  /** The `iss` the response came back with (RFC 9207): the action checks it before exchanging. */
  iss: string;
  action: (prev: ExchangeState, form: FormData) => Promise<ExchangeState>;
}) {
  const [result, run, pending] = useActionState(action, {});
  const done = !!result.result;
  return (
    <div className="space-y-4">
      {!done && (
        <form action={run}>
          <input type="hidden" name="code" value={code} />
          <input type="hidden" name="state" value={state} />
          <input type="hidden" name="iss" value={iss} />
          <Button type="submit" disabled={pending}>
            {pending ? "Exchanging…" : "Exchange code"}
          </Button>
        </form>
      )}
      {result.error && <Notice tone="error">{result.error}</Notice>}
      {result.result && (
        <>
          {/* Said only when the token endpoint answered with tokens: a refused code is said below, in red alone. */}
          {result.result.profile && (
            <Notice tone="success">
              Exchanged: the app redeemed the code with its secret and the PKCE verifier kept in this browser&apos;s cookie.
            </Notice>
          )}
          <Json title="POST /oauth/token" result={result.result.token} />
          {result.result.profile ? (
            <Json title="GET /v1/athletes/me with the access token" result={result.result.profile} />
          ) : (
            <Notice tone="error">The token endpoint refused the code, so the API was not called. Codes live 60 seconds and work once.</Notice>
          )}
        </>
      )}
    </div>
  );
}
