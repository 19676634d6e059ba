import { z } from "zod";
import { Instant, Limit } from "../http/schemas";

/** The kinds a subscription can ask for (SPEC §6.1, CONTRACT §7). */
export const WEBHOOK_EVENT_TYPES = ["activity.created", "activity.updated", "metric.created", "athlete.deauthorized"] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({ id: "WebhookEventType" });
export type WebhookEventType = z.output<typeof WebhookEventType>;

/** A test delivery's event type ("Send test event"): sent only when asked for, to one subscription. */
export const TEST_EVENT_TYPE = "webhook.test";

/** SPEC §2.2: the thin event, exactly as a delivery's body carries it. */
export const WebhookEvent = z
  .object({
    id: z.string().meta({ description: "The event's id; a redelivery carries the same one, so deduplicate on it.", example: "evt_3kQ9xV1mB7nT2pL5wZ8rYc" }),
    type: z.string().meta({ description: "`activity.created`, `activity.updated`, `metric.created`, `athlete.deauthorized`, or `webhook.test`." }),
    athlete_id: z.string().meta({ description: "The athlete the event concerns: route on it. For `webhook.test`, the developer account that owns the app." }),
    object_id: z.string().meta({ description: "The object concerned: fetch it from the API for detail." }),
    object_type: z.string().meta({ description: "`activity`, `metric`, `athlete`, or `webhook_subscription` (for `webhook.test`)." }),
    occurred_at: Instant,
  })
  .meta({ id: "WebhookEvent", description: "A thin event notification: no detail about the object, which the API serves." });
export type WebhookEvent = z.output<typeof WebhookEvent>;

export const ListAppEventsQuery = z.object({
  after: z
    .string()
    .max(500)
    .optional()
    .meta({ description: "A `next_cursor` from the previous page, or an event `id`: the events after it. Omit to start 30 days ago." }),
  limit: Limit,
});

export const AppEventList = z
  .object({
    data: z.array(WebhookEvent),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `after` for the next page; null on the last page (poll later with `after` set to the last event's `id`)." }),
  })
  .meta({ id: "AppEventList" });
