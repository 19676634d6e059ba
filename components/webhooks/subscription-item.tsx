"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type Ref } from "react";
import { ConsoleApiError, consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { useFocusBack } from "@/components/ui/focus-back";
import { FOCUSABLE_ROW } from "@/components/ui/focusable-rows";
import { formatInstant } from "@/components/ui/format";
import { FocusedNotice, useOutcome } from "@/components/ui/focused-notice";
import { useOneAtATime } from "@/components/ui/one-at-a-time";
import { Notice } from "@/components/ui/notice";
import { DISABLE_AFTER_FAILURES, FAILING_AFTER_FAILURES } from "@/lib/webhooks/policy";
import type { Delivery, Subscription, SubscriptionWithSecret, UpdatedSubscription } from "@/lib/webhooks/subscriptions/schemas";
import { DeliveryLog } from "./delivery-log";
import { EditEndpointForm } from "./edit-endpoint-form";
import { deliveriesKey, subscriptionPath, webhooksKey, type RevealedSecret } from "./shared";

function StatusBadge({ sub }: { sub: Subscription }) {
  const failing = sub.status === "active" && sub.consecutive_failures >= FAILING_AFTER_FAILURES;
  const [label, tone] =
    sub.status === "disabled"
      ? ["Disabled", "bg-red-50 text-red-700"]
      : failing
        ? ["Failing", "bg-amber-50 text-amber-800"]
        : ["Active", "bg-emerald-50 text-emerald-700"];
  return <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${tone}`}>{label}</span>;
}

/** One endpoint: its state, what can be done with it, and its delivery log on demand. */
export function SubscriptionItem({
  clientId,
  sub,
  onSecret,
  onDeleted,
  onGone,
  ref,
}: {
  clientId: string;
  sub: Subscription;
  onSecret: (r: RevealedSecret) => void;
  /** The item is gone with it: the page says so instead. */
  onDeleted: (url: string) => void;
  /** An action was answered 404: the endpoint was deleted elsewhere (another tab, the app over the API). The page says so and asks for the list again. */
  onGone: (url: string) => void;
  /** The item itself, which can take the focus (after its secret's "Done"). */
  ref?: Ref<HTMLLIElement>;
}) {
  const qc = useQueryClient();
  const path = subscriptionPath(clientId, sub.id);
  const [notice, setNotice] = useState<string | null>(null);
  /**
   * The test event just sent, said to be queued while its delivery waits for a first attempt.
   * Once the log shows it attempted (its outcome is there) or the endpoint is disabled (its
   * delivery was marked failed), "queued" is no longer true and the notice goes.
   */
  const [queued, setQueued] = useState<{ delivery: string; text: string } | null>(null);
  // Cleared in the render that learns of it (React's way of resetting state on a prop's change):
  // re-enabled later, the endpoint would not send this event anyway.
  if (queued && sub.status !== "active") setQueued(null);
  // Re-enabling and disabling take their own buttons away: the outcome takes the focus, so the
  // keyboard goes on from there.
  const [statusSaid, sayStatus] = useOutcome();
  // Open from the start: the log is what a developer comes to this page for; each delivery opens on its own.
  const [logOpen, setLogOpen] = useState(true);
  const [editing, setEditing] = useState(false);
  const { openerRef: editRef, close: closeEdit } = useFocusBack<HTMLButtonElement>(editing, () => setEditing(false));
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: webhooksKey(clientId), exact: true });
    void qc.invalidateQueries({ queryKey: deliveriesKey(clientId, sub.id) });
  };

  // Whatever the action, a 404 means the endpoint is no longer there.
  const onError = (err: Error) => {
    if (err instanceof ConsoleApiError && err.status === 404) onGone(sub.url);
  };

  const reenable = useMutation({
    onError,
    mutationFn: (redeliver: boolean) =>
      consoleFetch<UpdatedSubscription>(path, { method: "PATCH", body: redeliver ? { status: "active", redeliver_failed: true } : { status: "active" } }),
    onSuccess: (u) => {
      sayStatus(
        u.redelivered === undefined
          ? "Re-enabled after a fresh handshake. New events are delivered again."
          : `Re-enabled after a fresh handshake; ${u.redelivered} failed ${u.redelivered === 1 ? "delivery" : "deliveries"} queued again.`,
      );
      refresh();
    },
  });
  const disable = useMutation({
    onError,
    mutationFn: () => consoleFetch<UpdatedSubscription>(path, { method: "PATCH", body: { status: "disabled" } }),
    onSuccess: () => {
      sayStatus("Disabled. Nothing is sent to it until it is re-enabled; deliveries that were waiting are marked failed.");
      refresh();
    },
  });
  const test = useMutation({
    onError,
    mutationFn: () => consoleFetch<Delivery>(`${path}/send-test-event`, { method: "POST" }),
    onSuccess: (d) => {
      setQueued({ delivery: d.id, text: `Test event ${d.event?.id ?? ""} queued; it appears in the delivery log.` });
      setLogOpen(true);
      refresh();
    },
  });
  const rotate = useMutation({
    onError,
    mutationFn: () => consoleFetch<SubscriptionWithSecret>(`${path}/rotate-secret`, { method: "POST" }),
    onSuccess: (r) => {
      setNotice(null);
      onSecret({
        id: r.id,
        title: "New signing secret",
        url: r.url,
        secret: r.secret,
        note: `Copy the new signing secret now: it is shown only once. Until ${r.previous_secret_expires_at ? formatInstant(r.previous_secret_expires_at) : "24 hours from now"} deliveries also carry a signature made with the previous secret.`,
      });
      refresh();
    },
  });
  const remove = useMutation({
    onError,
    mutationFn: () => consoleFetch(path, { method: "DELETE" }),
    onSuccess: () => {
      onDeleted(sub.url);
      void qc.invalidateQueries({ queryKey: webhooksKey(clientId), exact: true });
    },
  });
  // Each action starts by forgetting the outcomes of the others, so what the item says is about
  // the latest action: an older failure of another button never hides a newer one.
  const start = () => {
    setNotice(null);
    setQueued(null);
    sayStatus(null);
    for (const m of [reenable, disable, test, rotate, remove]) m.reset();
  };
  // One action of the item at a time, from the first click on: a second click in the same instant
  // (before `busy` renders) would rotate the secret twice, or send two test events.
  const oneAtATime = useOneAtATime();
  const act = (run: () => Promise<unknown>) =>
    oneAtATime(() => {
      start();
      return run();
    });
  const error = reenable.error ?? disable.error ?? test.error ?? rotate.error ?? remove.error;
  const busy = reenable.isPending || disable.isPending || test.isPending || rotate.isPending || remove.isPending;
  const failing = sub.status === "active" && sub.consecutive_failures >= FAILING_AFTER_FAILURES;

  return (
    <li
      ref={ref}
      tabIndex={-1}
      className={`rounded-lg border border-slate-200 bg-white shadow-sm ${FOCUSABLE_ROW}`}
      aria-label={sub.url}
    >
      <div className="space-y-3 p-4">
        <div className="flex flex-wrap items-start justify-between gap-3">
          <div className="min-w-0 space-y-1">
            <div className="flex flex-wrap items-center gap-2">
              <StatusBadge sub={sub} />
              {/* The endpoint heads its item (the page's h1 above, each opened delivery's h3 below), looking as the URL always did. */}
              <h2 className="break-all font-mono text-sm">{sub.url}</h2>
            </div>
            <p className="text-xs text-slate-600">{sub.events.join(" · ")}</p>
            <p className="text-xs text-slate-500">
              <span data-testid="consecutive-failures">
                {sub.consecutive_failures} consecutive {sub.consecutive_failures === 1 ? "failure" : "failures"}
              </span>{" "}
              (disabled at {DISABLE_AFTER_FAILURES}) · Added {formatInstant(sub.created_at)}
            </p>
          </div>
        </div>
        {failing && sub.failing_since && (
          <Notice tone="warning" live={false}>
            Failing since {formatInstant(sub.failing_since)}: the last {sub.consecutive_failures} attempts failed. One delivery at a time probes the
            endpoint until it answers 2xx; at {DISABLE_AFTER_FAILURES} failures in a row it is disabled.
          </Notice>
        )}
        {sub.status === "disabled" && (
          <Notice tone="error" live={false}>
            Disabled{sub.disabled_at ? ` ${formatInstant(sub.disabled_at)}` : ""}: {(sub.disabled_reason ?? "no reason recorded").replace(/\.$/, "")}. Nothing is sent to it
            until it is re-enabled; re-enabling runs the handshake again.
          </Notice>
        )}
        {notice && <Notice tone="success">{notice}</Notice>}
        {queued && <Notice tone="success">{queued.text}</Notice>}
        {statusSaid && (
          <FocusedNotice key={statusSaid.id} tone="success">
            {statusSaid.text}
          </FocusedNotice>
        )}
        {error && <Notice tone="error">{error.message}</Notice>}
        {editing ? (
          <EditEndpointForm
            path={path}
            sub={sub}
            onGone={() => onGone(sub.url)}
            onCancel={closeEdit}
            onSaved={(updated, tokenOnly) => {
              closeEdit();
              setNotice(
                !updated
                  ? "Nothing changed."
                  : tokenOnly
                    ? "Saved. The new verify token is sent in the endpoint's next handshake (a new URL, or re-enabling it)."
                    : "Saved.",
              );
              if (updated) refresh();
            }}
          />
        ) : (
          <div className="flex flex-wrap gap-2">
            <Button
              ref={editRef}
              variant="secondary"
              disabled={busy}
              onClick={() => {
                start();
                setEditing(true);
              }}
            >
              Edit
            </Button>
            {sub.status === "disabled" ? (
              <>
                <Button
                  disabled={busy}
                  onClick={() => act(() => reenable.mutateAsync(false))}
                >
                  Re-enable
                </Button>
                <Button
                  variant="secondary"
                  disabled={busy}
                  onClick={() => act(() => reenable.mutateAsync(true))}
                >
                  {/* CONTRACT §7's name. It holds "Re-enable" too: a script tells the two apart by the exact name. */}
                  Re-enable and redeliver
                </Button>
              </>
            ) : (
              <>
                <Button
                  variant="secondary"
                  disabled={busy}
                  onClick={() => act(() => test.mutateAsync())}
                >
                  Send test event
                </Button>
                <Button
                  variant="secondary"
                  disabled={busy}
                  // One click, as Delete is: it is undone by Re-enable (after a fresh handshake).
                  onClick={() => act(() => disable.mutateAsync())}
                >
                  Disable
                </Button>
              </>
            )}
            <Button
              variant="secondary"
              disabled={busy}
              // One click, with no confirm() (CONTRACT §9 names the action; a journey clicking it
              // by name gets no answer to a native dialog): for 24 hours deliveries carry
              // signatures with both secrets, so nothing breaks at once.
              onClick={() => act(() => rotate.mutateAsync())}
            >
              Rotate secret
            </Button>
            <Button
              variant="danger"
              disabled={busy}
              // One click, as "Revoke" and "Disconnect" are (CONTRACT §9 names the action).
              onClick={() => act(() => remove.mutateAsync())}
            >
              Delete
            </Button>
          </div>
        )}
      </div>
      <div className="border-t border-slate-100">
        <button
          type="button"
          aria-expanded={logOpen}
          onClick={() => setLogOpen((o) => !o)}
          className="flex w-full items-center justify-between px-4 py-2.5 text-left text-sm font-medium text-slate-700 hover:bg-slate-50"
        >
          Delivery log
          <span aria-hidden="true">{logOpen ? "▴" : "▾"}</span>
        </button>
        {logOpen && (
          <div className="border-t border-slate-100 p-4">
            <DeliveryLog
              clientId={clientId}
              subscriptionId={sub.id}
              subscriptionActive={sub.status === "active"}
              onShown={(deliveries) =>
                setQueued((q) => (q && deliveries.some((d) => d.id === q.delivery && (d.status !== "pending" || d.attempt_count > 0)) ? null : q))
              }
            />
          </div>
        )}
      </div>
    </li>
  );
}
