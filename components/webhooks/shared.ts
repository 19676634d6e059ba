import { EVENT_KINDS, EVENT_SCOPES, SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType } from "@/lib/events/catalog";
import { ATTEMPT_INTERRUPTED, type Delivery, type DeliveryAttempt, type DeliveryFailureReason, type ListDeliveriesQuery } from "@/lib/webhooks/subscriptions/schemas";

export type DeliveryFilter = NonNullable<ListDeliveriesQuery["status"]> | "all";

export const webhooksKey = (clientId: string) => ["developer-apps", clientId, "webhooks"] as const;
export const deliveriesKey = (clientId: string, subscriptionId: string, filter?: DeliveryFilter) =>
  filter
    ? (["developer-apps", clientId, "webhooks", subscriptionId, "deliveries", filter] as const)
    : (["developer-apps", clientId, "webhooks", subscriptionId, "deliveries"] as const);

export const webhooksPath = (clientId: string) => `/api/console/apps/${encodeURIComponent(clientId)}/webhooks`;
export const subscriptionPath = (clientId: string, id: string) => `${webhooksPath(clientId)}/${encodeURIComponent(id)}`;

/** A signing secret shown once, after creation or rotation; `id` is its subscription's. */
export type RevealedSecret = { id: string; title: string; url: string; secret: string; note: string };

/**
 * The event types a new endpoint can subscribe to, from the event catalog, with what each means
 * and the scope an athlete's grant needs for the app to receive it. The activity events start
 * checked: they are what most apps come for.
 */
export const EVENT_OPTIONS: readonly { type: SubscribableEventType; label: string; scope: string | null; checked: boolean }[] =
  SUBSCRIBABLE_EVENT_TYPES.map((type) => ({
    type,
    label: EVENT_KINDS[type].description,
    scope: EVENT_SCOPES[type] ?? null,
    checked: EVENT_KINDS[type].objectType === "activity",
  }));

/** Why an attempt got no HTTP answer, in words. */
export const NOT_SENT_LABELS: Record<string, string> = {
  timeout: "No answer in time",
  connection_refused: "Connection refused",
  connection_reset: "Connection closed before an answer",
  blocked_address: "Address not allowed (not a public one)",
  dns: "Host name not found",
  tls: "TLS handshake failed",
  invalid_url: "URL not usable",
  invalid_response: "Not an HTTP answer (or headers over 16 KiB)",
  network: "Network error",
};

/** An attempt's outcome in a few words: its answer's status, why none came, or that its record was lost. */
export function attemptOutcome(a: DeliveryAttempt): string {
  if (a.outcome === "response") return `HTTP ${a.response_status}`;
  if (a.error === ATTEMPT_INTERRUPTED) return "Interrupted: the service stopped before it recorded an answer";
  return `Not sent: ${NOT_SENT_LABELS[a.error ?? ""] ?? a.error ?? "no answer"}`;
}

/** Why a delivery failed, in words (a sentence's end: "Failed: …"). */
export const FAILURE_REASON_LABELS: Record<DeliveryFailureReason, string> = {
  attempts_exhausted: "its attempts ran out",
  subscription_disabled: "the endpoint was disabled",
  athlete_disconnected: "the athlete disconnected the app, so their events no longer go to it",
};

/** A delivery's state in a few words: its last attempt's outcome, or why it was never sent. */
export function deliveryOutcome(d: Delivery): string {
  const last = d.attempts.at(-1);
  if (!last) return d.status === "failed" ? `Not sent: ${d.failure_reason ? FAILURE_REASON_LABELS[d.failure_reason] : "it failed"}` : "Not sent yet";
  return attemptOutcome(last);
}

/** How long a delivery log waits between refreshes while it is the only one open. */
export const DELIVERY_LOG_POLL_MS = 3000;

/** The delivery logs open in this tab: they share one pace of requests. */
const openLogs = new Set<string>();

/** Counts `id` as an open log until the function it returns is called (an effect's cleanup). */
export function openDeliveryLog(id: string): () => void {
  openLogs.add(id);
  return () => void openLogs.delete(id);
}

/**
 * How long a log waits before it refreshes, `pages` pages of it loaded, with `open` logs on the
 * page. Each refresh asks for every loaded page, and every log counts against the person's one
 * console window (CONSOLE_LIMIT_SCALE): however many logs are open and however far back they
 * go, the page as a whole asks about one page of deliveries every 1.5 s, a fifth of that window.
 */
export function deliveryLogPollMs(open = openLogs.size, pages = 1): number {
  return DELIVERY_LOG_POLL_MS * Math.max(1, Math.ceil(open / 2)) * Math.max(1, pages);
}

/** What a delivery log last showed: each delivery's status and attempt count, and when the newest one was made. */
export type ShownDeliveries = { states: ReadonlyMap<string, string>; newest: number };

/**
 * What a log shows now, after `before` (null: its first load), and whether a delivery was
 * attempted in between: one shown before that moved on, or a new one shown attempted already.
 * Each such attempt changed its endpoint's failure count, perhaps its status. Older deliveries
 * first shown by a filter or "Load older deliveries" are no news.
 */
export function noteShownDeliveries(before: ShownDeliveries | null, loaded: readonly Delivery[]): { shown: ShownDeliveries; moved: boolean } {
  const states = new Map(before?.states);
  let newest = before?.newest ?? 0;
  let moved = false;
  for (const d of loaded) {
    const state = `${d.status} ${d.attempt_count}`;
    const was = states.get(d.id);
    const created = Date.parse(d.created_at);
    if (before && (was === undefined ? d.attempt_count > 0 && created > before.newest : was !== state)) moved = true;
    states.set(d.id, state);
    newest = Math.max(newest, created);
  }
  return { shown: { states, newest }, moved };
}
