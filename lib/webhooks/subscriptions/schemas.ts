import { z } from "zod";
import { EVENT_KINDS, SUBSCRIBABLE_EVENT_TYPES, SubscribableEventType, WebhookEvent } from "../../events/catalog";
import { Cursor, Instant, Limit, listOf } from "../../http/schemas";
import { DISABLE_AFTER_FAILURES, FAILING_AFTER_FAILURES, MAX_ATTEMPTS } from "../policy";

const IdParam = z.string().min(1).max(64);
export const SubscriptionIdParams = z.object({ id: IdParam.meta({ description: "The subscription's id.", example: "whs_5tR8nL2xQ7mK1vB9cZ4pHs" }) });
export const DeliveryIdParams = SubscriptionIdParams.extend({
  delivery_id: IdParam.meta({ description: "The delivery's id.", example: "whd_8mN3kQ7xR2vT5pL9wB1cZa" }),
});

/** Checked by the verbs (`webhook-url.ts`), which answer `invalid_webhook_url` with a field error. */
const WebhookUrl = z.string().trim().min(1, "give the endpoint's URL").meta({
  description:
    "The endpoint that receives deliveries: `https://`, resolving to public addresses, no credentials, no fragment, at most 2000 characters; never a link-local address or a cloud's metadata service (169.254.169.254 and the like). (A service run with `WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true` also takes `http://`, loopback and private addresses.)",
  example: "https://hooks.example.com/aas",
});

/** The examples subscribe to the activity kinds, as the catalog names them. */
const ACTIVITY_EVENT_TYPES = SUBSCRIBABLE_EVENT_TYPES.filter((t) => EVENT_KINDS[t].objectType === "activity");

const EventTypes = z
  .array(SubscribableEventType)
  .min(1, "subscribe to at least one event type")
  .transform((types) => [...new Set(types)])
  .meta({ description: "The event types to deliver, at least one (see `WebhookEventType`)." });

const VerifyToken = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, "must be visible ASCII characters")
  .meta({ description: "Sent as `hub.verify_token` in the handshake, so the endpoint can tell the request is its own. Kept (sealed) and sent again in every later handshake (a new URL, re-enabling) until an update sends another; when the app never sent one, each handshake generates one." });

export const CreateSubscriptionInput = z
  .strictObject({ url: WebhookUrl, events: EventTypes, verify_token: VerifyToken.optional() })
  .meta({ id: "CreateWebhookSubscription", example: { url: "https://hooks.example.com/aas", events: ACTIVITY_EVENT_TYPES } });
export type CreateSubscriptionInput = z.output<typeof CreateSubscriptionInput>;

export const UpdateSubscriptionInput = z
  .strictObject({
    url: WebhookUrl.optional().meta({ description: "A new endpoint; it is verified with a fresh handshake before it replaces the old one." }),
    events: EventTypes.optional(),
    status: z
      .enum(["active", "disabled"])
      .optional()
      .meta({ description: "`active` re-enables a disabled subscription after a fresh handshake and resets its failure count; `disabled` stops deliveries." }),
    redeliver_failed: z
      .boolean()
      .optional()
      .meta({ description: "With `status: \"active\"`: also send again every delivery that failed since the first failure of the streak that disabled it." }),
    verify_token: VerifyToken.optional().meta({
      description:
        "Replaces the token kept for handshakes. Sent with a new `url` or `status: \"active\"`, it goes in that handshake; sent alone, it is kept for the next one (a new URL, re-enabling) and no handshake runs now.",
    }),
  })
  .refine((v) => v.url !== undefined || v.events !== undefined || v.status !== undefined || v.verify_token !== undefined, {
    message: "send url, events, status or verify_token",
  })
  .refine((v) => !v.redeliver_failed || v.status === "active", {
    message: "redeliver_failed goes with status: active",
    path: ["redeliver_failed"],
    params: { code: "invalid_parameter_combination" },
  })
  // The document says what the refinements above refuse: a change of nothing (at least one of
  // the four members), and redeliver_failed: true without status: "active".
  .meta({
    id: "UpdateWebhookSubscription",
    example: { events: ACTIVITY_EVENT_TYPES.slice(0, 2) },
    anyOf: ["url", "events", "status", "verify_token"].map((member) => ({ required: [member] })),
    if: { properties: { redeliver_failed: { const: true } }, required: ["redeliver_failed"] },
    then: { properties: { status: { const: "active" } }, required: ["status"] },
  });
export type UpdateSubscriptionInput = z.output<typeof UpdateSubscriptionInput>;

export const Subscription = z
  .object({
    id: z.string().meta({ example: "whs_5tR8nL2xQ7mK1vB9cZ4pHs" }),
    url: z.string(),
    events: z.array(SubscribableEventType),
    status: z.enum(["active", "disabled"]),
    consecutive_failures: z.number().int().min(0).meta({ description: `Failed attempts in a row; back to 0 on any success. At ${FAILING_AFTER_FAILURES} the subscription is failing, at ${DISABLE_AFTER_FAILURES} disabled.` }),
    failing_since: Instant.nullable().meta({ description: "When the current streak of failures began; null while deliveries succeed." }),
    disabled_at: Instant.nullable(),
    disabled_reason: z.string().nullable().meta({ description: "Why it was disabled, for people." }),
    previous_secret_expires_at: Instant.nullable().meta({ description: "After a rotation: until when deliveries also carry a signature made with the previous secret." }),
    created_at: Instant,
    updated_at: Instant,
  })
  .meta({ id: "WebhookSubscription", description: "An app's webhook subscription. Its signing secret is shown only on creation and rotation." });
export type Subscription = z.output<typeof Subscription>;

export const SubscriptionWithSecret = Subscription.extend({
  secret: z.string().meta({ description: "The signing secret (`whsec_…`): shown only in this answer. Verify `Service-Signature` with it.", example: "whsec_…" }),
}).meta({ id: "WebhookSubscriptionWithSecret" });
export type SubscriptionWithSecret = z.output<typeof SubscriptionWithSecret>;

export const UpdatedSubscription = Subscription.extend({
  redelivered: z.number().int().optional().meta({ description: "With `redeliver_failed`: how many deliveries were queued again." }),
}).meta({ id: "UpdatedWebhookSubscription" });
export type UpdatedSubscription = z.output<typeof UpdatedSubscription>;

export const ListSubscriptionsQuery = z.object({ limit: Limit, cursor: Cursor });
export const SubscriptionList = listOf(Subscription, "WebhookSubscriptionList");

/** What the endpoint did with a verification handshake: the `handshake` member of a `webhook_verification_failed` problem. */
export const HandshakeReport = z
  .object({
    outcome: z.enum(["verified", "not_sent", "unexpected_status", "body_incomplete", "not_json", "wrong_challenge"]).meta({
      description:
        "`not_sent`: no HTTP answer (see `error`). `unexpected_status`: a status other than 200. `body_incomplete`: a 200 whose body stopped before its end (see `error`). `not_json`: a 200 whose body is not JSON (only the first 4 KiB is read). `wrong_challenge`: JSON without the challenge sent as `hub.challenge`.",
    }),
    status: z.number().int().nullable().meta({ description: "The status it answered with; null when no answer arrived." }),
    content_type: z
      .string()
      .nullable()
      .meta({ description: "The media type it answered with (`application/json`); null when no answer arrived or it named none." }),
    body_excerpt: z
      .string()
      .max(200)
      .nullable()
      .meta({
        description:
          "The start of its answer's body, enough to debug a handshake and no more: at most 200 characters, control and invisible characters and runs of white space each shown as one space. Null when no answer arrived.",
      }),
    error: z
      .string()
      .nullable()
      .meta({
        description:
          "For `not_sent`: `timeout`, `connection_refused`, `connection_reset`, `blocked_address`, `dns`, `tls`, `invalid_url`, `invalid_response` (what came back was not HTTP, or its headers were over 16 KiB) or `network`; for an answer whose body stopped before its end (`body_incomplete`, or `unexpected_status`), why it stopped; else null.",
      }),
    duration_ms: z.number().int().min(0),
  })
  .meta({ id: "WebhookHandshake" });
export type HandshakeReport = z.output<typeof HandshakeReport>;

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export const DELIVERY_FAILURE_REASONS = ["attempts_exhausted", "subscription_disabled", "athlete_disconnected"] as const;
export type DeliveryFailureReason = (typeof DELIVERY_FAILURE_REASONS)[number];

/**
 * The `error` of an attempt a lapsed claim cut short: the service stopped (or could not record
 * the answer) while the attempt was in flight. The endpoint may have had the request; what was
 * sent is not known, so its request is empty. The next attempt sends the same event again.
 */
export const ATTEMPT_INTERRUPTED = "interrupted";

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int().min(1),
    started_at: Instant,
    duration_ms: z.number().int().min(0),
    outcome: z.enum(["response", "not_sent"]).meta({ description: "`response`: the endpoint answered (see `response_status`). `not_sent`: no HTTP answer arrived; `error` says why." }),
    response_status: z.number().int().nullable(),
    response_body_excerpt: z.string().nullable().meta({ description: "The start of the answer's body, at most 4 KiB." }),
    error: z
      .string()
      .nullable()
      .meta({
        description:
          "For `not_sent`: `dns`, `connection_refused`, `connection_reset`, `timeout`, `tls`, `blocked_address`, `invalid_url`, `invalid_response` (what came back was not HTTP, or its headers were over 16 KiB) or `network`; or `interrupted`: the service stopped while the attempt was in flight, so no answer was recorded (the endpoint may have had the request; the next attempt sends the same event again).",
      }),
    request_headers: z
      .record(z.string(), z.string())
      .meta({ description: "The headers sent, `Service-Signature` included; empty when nothing was sent or, for an `interrupted` attempt, nothing is known of it." }),
    request_body: z.string().meta({ description: "The exact body sent (the bytes signed); empty when nothing was sent or nothing is known of it." }),
  })
  .meta({ id: "WebhookDeliveryAttempt" });
export type DeliveryAttempt = z.output<typeof DeliveryAttempt>;

export const Delivery = z
  .object({
    id: z.string().meta({ example: "whd_8mN3kQ7xR2vT5pL9wB1cZa" }),
    subscription_id: z.string(),
    event: WebhookEvent.nullable().meta({ description: "The event delivered (the body of every attempt)." }),
    status: z.enum(DELIVERY_STATUSES).meta({
      description:
        "`pending` until an attempt succeeds (`succeeded`) or it fails for good (`failed`: attempts used up, the subscription disabled, or the athlete disconnected the app; `failure_reason` says which).",
    }),
    failure_reason: z.enum(DELIVERY_FAILURE_REASONS).nullable().meta({
      description:
        `Why a \`failed\` delivery failed: \`attempts_exhausted\` (its ${MAX_ATTEMPTS} attempts since it was last queued ran out), \`subscription_disabled\` (its subscription was disabled while it was pending: after ${DISABLE_AFTER_FAILURES} consecutive failures, or by the app's developer) or \`athlete_disconnected\` (the athlete disconnected the app before it was delivered: their events no longer go to it). Null unless \`failed\`, and for deliveries that failed before the service kept reasons.`,
    }),
    attempt_count: z.number().int().min(0).meta({ description: "Attempts made; 0 means never sent." }),
    next_attempt_at: Instant.nullable().meta({ description: "When the next attempt is due, while `pending`; otherwise null. While the subscription is failing, only its oldest pending delivery is tried: the others wait for it to succeed, whatever this says." }),
    created_at: Instant,
    attempts: z.array(DeliveryAttempt).meta({ description: "Every attempt, oldest first." }),
  })
  .meta({ id: "WebhookDelivery" });
export type Delivery = z.output<typeof Delivery>;

export const ListDeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional().meta({ description: "Only deliveries in this state." }),
  limit: Limit,
  cursor: Cursor,
});
export type ListDeliveriesQuery = z.output<typeof ListDeliveriesQuery>;
export const DeliveryList = listOf(Delivery, "WebhookDeliveryList");
