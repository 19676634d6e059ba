"use client";

import Link from "next/link";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConsoleApiError, consoleFetch, isClientError } from "@/components/console/api";
import { useDocumentTitle } from "@/components/console/document-title";
import { appKey, appPath } from "@/components/developer-apps/shared";
import { Button } from "@/components/ui/button";
import { Card, PageHeader } from "@/components/ui/card";
import { useFocusBack } from "@/components/ui/focus-back";
import { useFocusableRows } from "@/components/ui/focusable-rows";
import { FocusedNotice, useOutcome } from "@/components/ui/focused-notice";
import { Notice } from "@/components/ui/notice";
import type { DeveloperApp } from "@/lib/oauth-clients/schemas";
import type { Subscription, SubscriptionWithSecret } from "@/lib/webhooks/subscriptions/schemas";
import { AddEndpointForm } from "./add-endpoint-form";
import { SigningSecretReveal } from "./signing-secret-reveal";
import { SubscriptionItem } from "./subscription-item";
import { webhooksKey, webhooksPath, type RevealedSecret } from "./shared";
import { AppNotFound } from "@/components/developer-apps/app-not-found";

const noRetryOn4xx = (failures: number, err: Error) => !isClientError(err) && failures < 1;

/** An app's webhook subscriptions: add (with the handshake's result), manage, and read each delivery log. */
export function WebhooksPanel({ clientId, allowPrivate, apiBaseUrl }: { clientId: string; allowPrivate: boolean; apiBaseUrl: string }) {
  const qc = useQueryClient();
  const app = useQuery({ queryKey: appKey(clientId), queryFn: () => consoleFetch<DeveloperApp>(appPath(clientId)), retry: noRetryOn4xx });
  const subs = useQuery({
    queryKey: webhooksKey(clientId),
    queryFn: () => consoleFetch<{ data: Subscription[] }>(`${webhooksPath(clientId)}?limit=200`),
    retry: noRetryOn4xx,
    // Failure counts change as deliveries are attempted.
    refetchInterval: 10_000,
  });
  const [adding, setAdding] = useState(false);
  /** What the latest add or delete of an endpoint did: verified, or deleted. */
  // Numbered (useOutcome): the same words again, a second rotation say, are a new notice that takes the focus.
  const [outcome, setOutcome] = useOutcome();
  const [revealed, setRevealed] = useState<RevealedSecret | null>(null);
  const { rowRef, focusRow } = useFocusableRows();
  const { openerRef, close: cancelAdding } = useFocusBack<HTMLButtonElement>(adding, () => setAdding(false));
  const missing = [subs.error, app.error].some((e) => e instanceof ConsoleApiError && e.status === 404);
  // The static "Webhooks" until the app loads, then whose they are; an app that is not there says so, as its own page does.
  useDocumentTitle(missing ? "App not found" : app.data ? `Webhooks · ${app.data.name}` : null);

  if (missing) return <AppNotFound clientId={clientId} />;

  return (
    <>
      <Link href={`/developers/apps/${encodeURIComponent(clientId)}`} className="mb-3 inline-block max-w-full text-sm text-brand-600 [overflow-wrap:anywhere] hover:underline">
        ← {app.data?.name ?? "App"}
      </Link>
      <PageHeader
        title={app.data ? `Webhooks of ${app.data.name}` : "Webhooks"}
        description="Events for every athlete who authorized the app, POSTed to your endpoints and signed with each endpoint's secret."
        actions={
          subs.data &&
          !adding && (
            <Button
              ref={openerRef}
              onClick={() => {
                setAdding(true);
                setOutcome(null);
              }}
            >
              Add endpoint
            </Button>
          )
        }
      />
      <div className="space-y-6">
        {subs.error && <Notice tone="error">{subs.error.message}</Notice>}
        {outcome && (
          <FocusedNotice key={outcome.id} tone="success">
            {outcome.text}
          </FocusedNotice>
        )}
        {revealed && (
          <SigningSecretReveal
            revealed={revealed}
            onDone={() => {
              // Done goes away with the secret: the endpoint's item in the list takes the focus.
              focusRow(revealed.id);
              setRevealed(null);
            }}
          />
        )}
        {adding && (
          <Card title="Add endpoint">
            <AddEndpointForm
              clientId={clientId}
              allowPrivate={allowPrivate}
              onCancel={cancelAdding}
              onCreated={(sub: SubscriptionWithSecret) => {
                setAdding(false);
                setOutcome(`Verified: ${sub.url} answered the handshake with the challenge. The endpoint is active.`);
                setRevealed({
                  id: sub.id,
                  title: "Signing secret",
                  url: sub.url,
                  secret: sub.secret,
                  note: "Copy the signing secret now: it is shown only once. Verify every delivery's Service-Signature with it.",
                });
                void qc.invalidateQueries({ queryKey: webhooksKey(clientId), exact: true });
              }}
            />
          </Card>
        )}
        {subs.isPending && <p className="text-sm text-slate-500">Loading…</p>}
        {subs.data && subs.data.data.length === 0 && !adding && (
          <Card>
            <p className="text-sm text-slate-600">
              No endpoints yet. Add one to receive <code>activity.created</code> and other events as they happen, instead of polling.
            </p>
          </Card>
        )}
        {subs.data && subs.data.data.length > 0 && (
          <ul className="space-y-4" aria-label="Webhook endpoints">
            {subs.data.data.map((s) => (
              <SubscriptionItem
                key={s.id}
                ref={rowRef(s.id)}
                clientId={clientId}
                sub={s}
                onSecret={(r) => {
                  // As after "Add endpoint": the page says what happened and takes the focus there,
                  // above the new secret (the button pressed may be far below it).
                  setOutcome(`Rotated the signing secret of ${r.url}. Copy the new secret below: it is shown only once.`);
                  setRevealed(r);
                }}
                onDeleted={(url) => {
                  // What was said about this endpoint (verified, its secret) no longer holds.
                  setRevealed((r) => (r?.url === url ? null : r));
                  setOutcome(`Deleted the endpoint ${url}: nothing more is sent to it, and its delivery log is gone.`);
                }}
                onGone={(url) => {
                  // Deleted in another tab or by the app over the API: the list is asked again,
                  // and the page says why the endpoint left it.
                  setRevealed((r) => (r?.url === url ? null : r));
                  setOutcome(`The endpoint ${url} is no longer there: it was deleted elsewhere (in another tab, or by the app over the API).`);
                  void qc.invalidateQueries({ queryKey: webhooksKey(clientId), exact: true });
                }}
              />
            ))}
          </ul>
        )}
        {subs.data && (
          <p className="text-xs text-slate-500">
            The app manages the same endpoints with a client-credentials token:{" "}
            <code className="break-all rounded bg-slate-100 px-1 py-0.5 text-slate-700">GET {apiBaseUrl}/app/webhooks</code>; after an outage,{" "}
            <code className="break-all rounded bg-slate-100 px-1 py-0.5 text-slate-700">GET {apiBaseUrl}/app/events</code> lists the last 30 days&apos; events to
            reconcile with.
          </p>
        )}
      </div>
    </>
  );
}
