import type { ListDeliveriesQuery } from "@/lib/webhooks/subscriptions/schemas";

export type DeliveryFilter = NonNullable<ListDeliveriesQuery["status"]> | "all";

export const webhooksKey = (clientId: string) => ["developer-apps", clientId, "webhooks"] as const;
export const deliveriesKey = (clientId: string, subscriptionId: string, filter?: DeliveryFilter) =>
  filter
    ? (["developer-apps", clientId, "webhooks", subscriptionId, "deliveries", filter] as const)
    : (["developer-apps", clientId, "webhooks", subscriptionId, "deliveries"] as const);

export const webhooksPath = (clientId: string) => `/api/console/apps/${encodeURIComponent(clientId)}/webhooks`;
export const subscriptionPath = (clientId: string, id: string) => `${webhooksPath(clientId)}/${encodeURIComponent(id)}`;

/** What each event type means, for the checkboxes and the list. */
export const EVENT_TYPE_LABELS: Record<string, string> = {
  "activity.created": "An athlete recorded an activity",
  "activity.updated": "An athlete changed an activity",
  "metric.created": "An athlete recorded a body metric (needs metrics.read)",
  "athlete.deauthorized": "An athlete disconnected the app",
};

/** Why an attempt got no HTTP answer, in words. */
export const NOT_SENT_LABELS: Record<string, string> = {
  timeout: "No answer in time",
  connection_refused: "Connection refused",
  connection_reset: "Connection closed before an answer",
  blocked_address: "Address not allowed (not a public one)",
  dns: "Host name not found",
  tls: "TLS handshake failed",
  invalid_url: "URL not usable",
  network: "Network error",
};

/** How long the delivery log waits between refreshes while it is open. */
export const DELIVERY_LOG_POLL_MS = 3000;
