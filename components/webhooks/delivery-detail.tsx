"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { formatInstant } from "@/components/ui/format";
import { Notice } from "@/components/ui/notice";
import { ATTEMPT_INTERRUPTED, type Delivery, type DeliveryAttempt } from "@/lib/webhooks/subscriptions/schemas";
import { FAILURE_REASON_LABELS, attemptOutcome, deliveriesKey, subscriptionPath } from "./shared";
import { ScrollRegion } from "@/components/ui/scroll-region";

function Attempt({ a }: { a: DeliveryAttempt }) {
  return (
    <li className="space-y-2 rounded-md border border-slate-200 bg-white p-3" aria-label={`Attempt ${a.attempt}`}>
      {/* Each attempt a heading under the delivery's (h3): jumping by headings says which attempt a Request or Response belongs to. */}
      <h4 className="text-sm font-medium">
        Attempt {a.attempt} · {formatInstant(a.started_at)} · {a.duration_ms} ms
      </h4>
      <div className="grid gap-3 lg:grid-cols-2">
        <section className="min-w-0 space-y-1">
          <h5 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Request</h5>
          {a.error === ATTEMPT_INTERRUPTED ? (
            <p className="text-sm text-slate-600">
              Not recorded: the service stopped during this attempt. The endpoint may have received it; the next attempt sends it again with the same
              Service-Event-Id.
            </p>
          ) : a.request_body === "" && Object.keys(a.request_headers).length === 0 ? (
            <p className="text-sm text-slate-600">
              {a.error === "blocked_address"
                ? "Nothing was sent: the endpoint's address is one this service does not send to (see the response's error)."
                : a.error === "invalid_url"
                  ? "Nothing was sent: the endpoint's URL cannot be used (see the response's error)."
                  : "Nothing was sent: the request could not be prepared."}
            </p>
          ) : (
            <>
              <dl className="space-y-0.5 font-mono text-xs">
                {Object.entries(a.request_headers).map(([k, v]) => (
                  <div key={k} className="break-all">
                    <dt className="inline text-slate-500">{k}: </dt>
                    <dd className="inline">{v}</dd>
                  </div>
                ))}
              </dl>
              <pre className="overflow-x-auto whitespace-pre-wrap break-all rounded bg-slate-900 p-2 text-xs text-slate-100">{a.request_body}</pre>
            </>
          )}
        </section>
        <section className="min-w-0 space-y-1">
          <h5 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Response</h5>
          {a.outcome === "response" ? (
            <>
              <p className="text-sm">
                Status <span className={`font-mono font-semibold ${a.response_status! < 300 ? "text-emerald-700" : "text-red-700"}`}>{a.response_status}</span>
              </p>
              <ScrollRegion as="pre" label={`Attempt ${a.attempt} response body`} className="max-h-64 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 text-xs">
                {a.response_body_excerpt ? a.response_body_excerpt : <span className="text-slate-600">(empty body)</span>}
              </ScrollRegion>
            </>
          ) : (
            <p className="text-sm text-red-700">
              {attemptOutcome(a)} <span className="font-mono text-xs text-slate-500">({a.error})</span>
            </p>
          )}
        </section>
      </div>
    </li>
  );
}

/** One delivery opened: its event, each attempt as sent and as answered, and "Redeliver". */
export function DeliveryDetail({
  clientId,
  subscriptionId,
  delivery,
  subscriptionActive,
}: {
  clientId: string;
  subscriptionId: string;
  delivery: Delivery;
  subscriptionActive: boolean;
}) {
  const qc = useQueryClient();
  const [queued, setQueued] = useState(false);
  const redeliver = useMutation({
    mutationFn: () =>
      consoleFetch<Delivery>(`${subscriptionPath(clientId, subscriptionId)}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`, { method: "POST" }),
    onSuccess: () => {
      setQueued(true);
      void qc.invalidateQueries({ queryKey: deliveriesKey(clientId, subscriptionId) });
    },
  });

  return (
    <div className="space-y-3">
      {/* The delivery's heading, under its endpoint's (h2): the row's button just above says the same words to the eye. */}
      <h3 className="sr-only">{delivery.event ? `${delivery.event.type} ${delivery.event.id}` : `Delivery ${delivery.id}`}</h3>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <dl className="space-y-0.5 text-xs">
          <div>
            <dt className="inline text-slate-500">Delivery </dt>
            <dd className="inline font-mono">{delivery.id}</dd>
          </div>
          {delivery.next_attempt_at && (
            <div>
              <dt className="inline text-slate-500">Next attempt </dt>
              <dd className="inline">{formatInstant(delivery.next_attempt_at)}</dd>
            </div>
          )}
        </dl>
        <Button variant="secondary" disabled={redeliver.isPending || !subscriptionActive} onClick={() => redeliver.mutate()}>
          Redeliver
        </Button>
      </div>
      {!subscriptionActive && <p className="text-xs text-slate-500">Re-enable the endpoint to redeliver.</p>}
      {queued && <Notice tone="success">Queued again: the same event, with the same id, is sent once more.</Notice>}
      {redeliver.error && <Notice tone="error">{redeliver.error.message}</Notice>}
      <section className="space-y-1">
        <h4 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Event</h4>
        <ScrollRegion as="pre" label="Event JSON" className="overflow-x-auto rounded bg-slate-100 p-2 text-xs">
          {JSON.stringify(delivery.event, null, 2)}
        </ScrollRegion>
      </section>
      {delivery.status === "failed" && (
        <p className="text-sm text-red-700">
          {delivery.attempts.length === 0 ? "Not sent" : "Failed"}
          {delivery.failure_reason ? `: ${FAILURE_REASON_LABELS[delivery.failure_reason]}.` : " (its reason was not recorded)."}
        </p>
      )}
      {delivery.attempts.length === 0 ? (
        delivery.status === "pending" && (
          <p className="text-sm text-slate-600">Not sent yet{delivery.next_attempt_at ? `; due ${formatInstant(delivery.next_attempt_at)}` : ""}.</p>
        )
      ) : (
        <ol className="space-y-2" aria-label="Attempts">
          {delivery.attempts.map((a) => (
            <Attempt key={a.attempt} a={a} />
          ))}
        </ol>
      )}
    </div>
  );
}
