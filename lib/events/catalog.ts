import { z } from "zod";
import type { Scope } from "../auth/scopes";
import { Instant } from "../http/schemas";

/**
 * Who an event of a kind goes to (SPEC §6.2, CONTRACT §7):
 * - `grants`: every app the athlete authorized, if the grant carried `scope` when the event occurred;
 * - `app`: only the app named by the event's `client_id` (its grant is already gone, so no scope);
 * - `subscription`: one subscription, when its owner asks for it; never subscribed to.
 */
type EventKind = { objectType: string; description: string } & (
  | { to: "grants"; scope: Scope }
  | { to: "app" | "subscription"; scope?: never }
);

/**
 * Every kind of event the service emits, the only list of them. The outbox, fan-out's scope
 * table, subscriptions, `/v1/app/events`, the console and the OpenAPI document all take the
 * kinds from here: adding one is an entry here plus the code that appends it to the outbox.
 * `objectType` is what the event's `object_id` names; `description` is one line for people.
 */
export const EVENT_KINDS = {
  "activity.created": { objectType: "activity", to: "grants", scope: "activities.read", description: "An athlete recorded an activity." },
  "activity.updated": { objectType: "activity", to: "grants", scope: "activities.read", description: "An athlete changed an activity." },
  "activity.deleted": { objectType: "activity", to: "grants", scope: "activities.read", description: "An athlete deleted an activity; it can no longer be fetched." },
  "metric.created": { objectType: "metric", to: "grants", scope: "metrics.read", description: "An athlete recorded a body metric." },
  "metric.deleted": { objectType: "metric", to: "grants", scope: "metrics.read", description: "An athlete deleted a metric; it can no longer be fetched." },
  "athlete.deauthorized": { objectType: "athlete", to: "app", description: "An athlete disconnected the app." },
  "webhook.test": {
    objectType: "webhook_subscription",
    to: "subscription",
    description: "A test delivery, sent only when asked for (\"Send test event\"); its athlete is the developer who owns the app.",
  },
} as const satisfies Record<string, EventKind>;

type Kinds = typeof EVENT_KINDS;
export type EventType = keyof Kinds;
/** The kinds an app can subscribe to: all but those sent to one subscription on request. */
export type SubscribableEventType = { [K in EventType]: Kinds[K]["to"] extends "subscription" ? never : K }[EventType];
export type EventObjectType = Kinds[EventType]["objectType"];

const kinds = Object.entries(EVENT_KINDS as Readonly<Record<EventType, EventKind>>) as [EventType, EventKind][];

/** Every kind, in catalog order. */
export const EVENT_TYPES = kinds.map(([t]) => t) as [EventType, ...EventType[]];
export const SUBSCRIBABLE_EVENT_TYPES = kinds.filter(([, k]) => k.to !== "subscription").map(([t]) => t) as [
  SubscribableEventType,
  ...SubscribableEventType[],
];
const OBJECT_TYPES = [...new Set(kinds.map(([, k]) => k.objectType))] as [EventObjectType, ...EventObjectType[]];

/** The one kind sent to one subscription on request. */
export const TEST_EVENT_TYPE = "webhook.test" satisfies EventType;

/** SPEC §6.2 (3): the scope each kind that goes to grants sits behind. Other kinds go to no one through a grant. */
export const EVENT_SCOPES: Readonly<Partial<Record<EventType, Scope>>> = Object.fromEntries(
  kinds.flatMap(([t, k]) => (k.to === "grants" ? [[t, k.scope]] : [])),
);

/** Kinds addressed to one app through the event's `client_id`. */
export const APP_ADDRESSED_EVENT_TYPES: readonly EventType[] = kinds.filter(([, k]) => k.to === "app").map(([t]) => t);

const described = (types: readonly EventType[]) =>
  types
    .map((t) => {
      const kind: EventKind = EVENT_KINDS[t];
      return `\`${t}\`: ${kind.description}${kind.scope ? ` Sent where the athlete's grant carries \`${kind.scope}\`.` : ""}`;
    })
    .join(" ");

export const EventType = z.enum(EVENT_TYPES).meta({ id: "EventType", description: `The kind of event. ${described(EVENT_TYPES)}` });

/** The kinds a webhook subscription can ask for (SPEC §6.1, CONTRACT §7). */
export const SubscribableEventType = z
  .enum(SUBSCRIBABLE_EVENT_TYPES)
  .meta({ id: "WebhookEventType", description: `A kind a subscription can ask for. ${described(SUBSCRIBABLE_EVENT_TYPES)}` });

/** SPEC §2.2: the thin event, exactly as a delivery's body carries it and `/v1/app/events` lists it. */
export const WebhookEvent = z
  .object({
    id: z.string().meta({ description: "The event's id; a redelivery carries the same one, so deduplicate on it.", example: "evt_3kQ9xV1mB7nT2pL5wZ8rYc" }),
    type: EventType,
    athlete_id: z.string().meta({ description: `The athlete the event concerns: route on it. For \`${TEST_EVENT_TYPE}\`, the developer account that owns the app.` }),
    object_id: z.string().meta({ description: "The object concerned: fetch it from the API for detail." }),
    object_type: z.enum(OBJECT_TYPES).meta({
      description: `What \`object_id\` names: ${kinds.map(([t, k]) => `\`${k.objectType}\` for \`${t}\``).join(", ")}.`,
    }),
    occurred_at: Instant,
  })
  .meta({ id: "WebhookEvent", description: "A thin event notification: no detail about the object, which the API serves." });
export type WebhookEvent = z.output<typeof WebhookEvent>;
