"use client";

import { useInfiniteQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useEffectEvent, useLayoutEffect, useMemo, useRef, useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { FOCUSABLE_ROW } from "@/components/ui/focusable-rows";
import { formatInstant } from "@/components/ui/format";
import { Notice } from "@/components/ui/notice";
import type { Delivery } from "@/lib/webhooks/subscriptions/schemas";
import { DeliveryDetail } from "./delivery-detail";
import {
  deliveriesKey,
  deliveryLogPollMs,
  deliveryOutcome,
  noteShownDeliveries,
  openDeliveryLog,
  subscriptionPath,
  webhooksKey,
  type DeliveryFilter,
  type ShownDeliveries,
} from "./shared";

const FILTERS: { value: DeliveryFilter; label: string }[] = [
  { value: "all", label: "All" },
  { value: "pending", label: "Pending" },
  { value: "succeeded", label: "Succeeded" },
  { value: "failed", label: "Failed" },
];

const STATUS_TONES: Record<Delivery["status"], string> = {
  pending: "bg-slate-100 text-slate-700",
  succeeded: "bg-emerald-50 text-emerald-700",
  failed: "bg-red-50 text-red-700",
};

/** A subscription's deliveries, newest first, refreshed while shown (every 3 s when it is the only log open). */
export function DeliveryLog({
  clientId,
  subscriptionId,
  subscriptionActive,
  onShown,
}: {
  clientId: string;
  subscriptionId: string;
  subscriptionActive: boolean;
  /** Told the deliveries shown each time the log loads them. */
  onShown?: (deliveries: Delivery[]) => void;
}) {
  const qc = useQueryClient();
  const [filter, setFilter] = useState<DeliveryFilter>("all");
  const [openId, setOpenId] = useState<string | null>(null);
  const log = useInfiniteQuery({
    queryKey: deliveriesKey(clientId, subscriptionId, filter),
    queryFn: ({ pageParam }) => {
      const q = new URLSearchParams({ limit: "25" });
      if (filter !== "all") q.set("status", filter);
      if (pageParam) q.set("cursor", pageParam);
      return consoleFetch<{ data: Delivery[]; next_cursor: string | null }>(`${subscriptionPath(clientId, subscriptionId)}/deliveries?${q}`);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    // Slower with more logs open and more pages loaded: the page shares one console window.
    refetchInterval: (query) => deliveryLogPollMs(undefined, query.state.data?.pages.length ?? 1),
  });
  useEffect(() => openDeliveryLog(subscriptionId), [subscriptionId]);
  // A delivery attempted since the log last loaded changed its endpoint's failure count, perhaps
  // its status: the endpoint's header reads them from the list of subscriptions, polled every
  // 10 s, which is asked again at once so that the header and the log move together.
  const shown = useRef<ShownDeliveries | null>(null);
  const onLoaded = useEffectEvent((loaded: Delivery[]) => {
    const { shown: now, moved } = noteShownDeliveries(shown.current, loaded);
    shown.current = now;
    if (moved) void qc.invalidateQueries({ queryKey: webhooksKey(clientId), exact: true });
    onShown?.(loaded);
  });
  const deliveries = useMemo(() => log.data?.pages.flatMap((p) => p.data) ?? [], [log.data]);
  useEffect(() => {
    if (log.data) onLoaded(deliveries);
  }, [log.data, deliveries]);
  const listRef = useRef<HTMLUListElement>(null);
  const moreRef = useRef<HTMLButtonElement>(null);
  /**
   * Where the focus goes once older deliveries loaded: back to "Load older deliveries" while
   * there are more, else (the button went away) to the first row loaded, or the list when the
   * last page held none. Set by the button's press; applied at once if the rows are shown
   * already, else when they are.
   */
  const focusAfterLoad = useRef<{ more: boolean; first: string | null } | null>(null);
  const applyFocus = () => {
    const target = focusAfterLoad.current;
    if (!target) return;
    if (target.more) {
      focusAfterLoad.current = null;
      return moreRef.current?.focus();
    }
    const row = target.first ? listRef.current?.querySelector<HTMLElement>(`li[data-delivery-id="${CSS.escape(target.first)}"]`) : listRef.current;
    if (!row) return;
    focusAfterLoad.current = null;
    row.focus();
  };
  useLayoutEffect(applyFocus, [log.data]);
  const loadOlder = async () => {
    const result = await log.fetchNextPage();
    if (result.isError) return;
    // The page just loaded is the last one: its first row is the first one new to the list.
    focusAfterLoad.current = { more: result.hasNextPage, first: result.data?.pages.at(-1)?.data[0]?.id ?? null };
    applyFocus();
  };

  return (
    <div className="space-y-3">
      <div role="group" aria-label="Filter deliveries by status" className="flex flex-wrap gap-1">
        {FILTERS.map((f) => (
          <button
            key={f.value}
            type="button"
            aria-pressed={filter === f.value}
            onClick={() => setFilter(f.value)}
            className={`rounded-md border px-2.5 py-1 text-sm ${filter === f.value ? "border-brand-500 bg-brand-50 font-medium text-brand-700" : "border-slate-200 text-slate-700 hover:bg-slate-50"}`}
          >
            {f.label}
          </button>
        ))}
      </div>
      {log.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {log.error && <Notice tone="error">{log.error.message}</Notice>}
      {log.data && deliveries.length === 0 && (
        <p className="text-sm text-slate-600">
          {filter === "all" ? "Nothing delivered yet. Deliveries appear here as events happen, or press “Send test event”." : `No ${filter} deliveries.`}
        </p>
      )}
      {deliveries.length > 0 && (
        <ul ref={listRef} tabIndex={-1} className={`divide-y divide-slate-100 rounded-md border border-slate-200 ${FOCUSABLE_ROW}`} aria-label="Deliveries">
          {deliveries.map((d) => {
            const open = openId === d.id;
            return (
              <li key={d.id} data-delivery-id={d.id} tabIndex={-1} className={FOCUSABLE_ROW} aria-label={`Delivery ${d.id}`}>
                <button
                  type="button"
                  aria-expanded={open}
                  onClick={() => setOpenId(open ? null : d.id)}
                  className="grid w-full gap-1 px-3 py-2 text-left text-sm hover:bg-slate-50 sm:grid-cols-[8rem_1fr_auto] sm:items-center sm:gap-3"
                >
                  <span>
                    <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${STATUS_TONES[d.status]}`}>{d.status}</span>
                  </span>
                  <span className="min-w-0">
                    <span className="font-mono text-xs">{d.event?.type ?? "event"}</span>{" "}
                    <span className="break-all font-mono text-xs text-slate-500">{d.event?.id}</span>
                  </span>
                  <span className="text-xs text-slate-500 sm:text-right">
                    {deliveryOutcome(d)} · {d.attempt_count} {d.attempt_count === 1 ? "attempt" : "attempts"} · {formatInstant(d.created_at)}
                  </span>
                </button>
                {open && (
                  <div className="border-t border-slate-100 bg-slate-50/60 p-3">
                    <DeliveryDetail clientId={clientId} subscriptionId={subscriptionId} delivery={d} subscriptionActive={subscriptionActive} />
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {log.hasNextPage && (
        <Button ref={moreRef} variant="secondary" disabled={log.isFetchingNextPage} onClick={() => void loadOlder()}>
          Load older deliveries
        </Button>
      )}
    </div>
  );
}
