import type { Scope } from "../auth/scopes";

/**
 * SPEC §6.2 (3): the scope an event's data sits behind. An app whose grant lacks it never
 * receives the event. Kinds not listed here go to no one through a grant.
 */
export const EVENT_SCOPES: Readonly<Record<string, Scope>> = {
  "activity.created": "activities.read",
  "activity.updated": "activities.read",
  "metric.created": "metrics.read",
};
