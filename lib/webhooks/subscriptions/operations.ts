import { defineOperation } from "../../http/operation";
import {
  Delivery,
  DeliveryIdParams,
  DeliveryList,
  ListDeliveriesQuery,
  ListSubscriptionsQuery,
  Subscription,
  SubscriptionIdParams,
  SubscriptionList,
  SubscriptionWithSecret,
  UpdatedSubscription,
} from "./schemas";
import { CreateSubscriptionBody, UpdateSubscriptionBody } from "./webhook-url";
import { DISABLE_AFTER_FAILURES, FAILING_AFTER_FAILURES, MAX_ATTEMPTS } from "../policy";

const TAG = "Webhooks";

const HANDSHAKE =
  "The verification handshake runs inline: `GET {url}?hub.mode=subscribe&hub.challenge=<random>&hub.verify_token=<token>`, which must be answered within 5 seconds with status 200 and a JSON body holding `hub.challenge` equal to the challenge received (`{\"hub.challenge\": \"…\"}`). Redirects are not followed and the address is checked when connecting. " +
  "If it does not complete, the answer is 400 `webhook_verification_failed`, `detail` says what the endpoint did, and the problem's `handshake` member gives it as data: `{outcome, status, content_type, body_excerpt, error, duration_ms}`, where `outcome` is `not_sent` (no answer: `error` is `timeout`, `connection_refused`, `blocked_address`, `dns`, `tls` …), `unexpected_status`, `body_incomplete` (a 200 whose body stopped before its end: `error` says why), `not_json` or `wrong_challenge`. Of the answer's body only its first 200 printable characters are shown, and nothing of an address that is not allowed.";

export const createSubscriptionOp = defineOperation({
  method: "POST",
  path: "/v1/app/webhooks",
  operationId: "createWebhookSubscription",
  summary: "Subscribe to webhook events",
  description: `Subscribes the app, once, to events for every athlete who has authorized it. An event is delivered while the kind is subscribed to, the athlete has authorized the app, and the athlete's grant carries the kind's scope (the scope each kind needs is in \`WebhookEventType\`), judged as of when the event occurred: an event from before the athlete authorized the app, or before the grant carried its scope, is never sent; \`athlete.deauthorized\` is sent once, when an athlete disconnects the app. ${HANDSHAKE} Nothing is created unless the handshake completes. The answer carries the signing \`secret\`, shown only here. An app may have 20 subscriptions, one per URL (409 \`conflict\` beyond, or for a URL it already has: change that subscription's events instead). Accepts \`Idempotency-Key\`.`,
  tag: TAG,
  auth: "app",
  body: CreateSubscriptionBody,
  idempotent: true,
  response: { status: 201, description: "The subscription, verified and active, with its secret.", schema: SubscriptionWithSecret, location: (sub) => `/v1/app/webhooks/${sub.id}` },
  errors: [
    "invalid_request",
    "invalid_enum_value",
    "invalid_webhook_url",
    "webhook_verification_failed",
    "conflict",
    "idempotency_key_in_use",
    "idempotency_key_reused",
  ],
});

export const listSubscriptionsOp = defineOperation({
  method: "GET",
  path: "/v1/app/webhooks",
  operationId: "listWebhookSubscriptions",
  summary: "List the app's webhook subscriptions",
  description: `Oldest first, each with \`consecutive_failures\` (${FAILING_AFTER_FAILURES} or more: failing since \`failing_since\`; ${DISABLE_AFTER_FAILURES}: disabled).`,
  tag: TAG,
  auth: "app",
  query: ListSubscriptionsQuery,
  response: { status: 200, description: "A page of subscriptions.", schema: SubscriptionList },
  errors: ["invalid_cursor"],
});

export const getSubscriptionOp = defineOperation({
  method: "GET",
  path: "/v1/app/webhooks/{id}",
  operationId: "getWebhookSubscription",
  summary: "Get a webhook subscription",
  description: "Another app's subscription is 404, like one that does not exist.",
  tag: TAG,
  auth: "app",
  params: SubscriptionIdParams,
  response: { status: 200, description: "The subscription.", schema: Subscription },
  errors: ["not_found"],
});

export const updateSubscriptionOp = defineOperation({
  method: "PATCH",
  path: "/v1/app/webhooks/{id}",
  operationId: "updateWebhookSubscription",
  summary: "Change, re-enable or disable a webhook subscription",
  description: `Changes the members sent. A new \`url\` is verified before it replaces the old one, and may not be one another of the app's subscriptions has (409 \`conflict\`). \`{"status": "active"}\` re-enables a disabled subscription after a fresh handshake and resets \`consecutive_failures\`, \`failing_since\` and \`disabled_at\`; add \`"redeliver_failed": true\` to also send again every delivery that failed since the first failure of the streak, except events of athletes who have since disconnected the app (the answer's \`redelivered\` counts them), each with the whole retry schedule again. \`{"status": "disabled"}\` stops deliveries; pending ones become \`failed\`. The \`verify_token\` kept from the create (sealed) goes with every later handshake; send one to replace it, alone too (\`{"verify_token": "…"}\` runs no handshake: the next one, for a new URL or re-enabling, sends it). ${HANDSHAKE} If it fails nothing changes.`,
  tag: TAG,
  auth: "app",
  params: SubscriptionIdParams,
  body: UpdateSubscriptionBody,
  response: { status: 200, description: "The subscription as changed.", schema: UpdatedSubscription },
  errors: ["invalid_request", "invalid_enum_value", "invalid_parameter_combination", "invalid_webhook_url", "webhook_verification_failed", "not_found", "conflict"],
});

export const deleteSubscriptionOp = defineOperation({
  method: "DELETE",
  path: "/v1/app/webhooks/{id}",
  operationId: "deleteWebhookSubscription",
  summary: "Delete a webhook subscription",
  description: "Nothing more is sent to it; its delivery log goes with it.",
  tag: TAG,
  auth: "app",
  params: SubscriptionIdParams,
  response: { status: 204, description: "Deleted." },
  errors: ["not_found"],
});

export const rotateSubscriptionSecretOp = defineOperation({
  method: "POST",
  path: "/v1/app/webhooks/{id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  summary: "Rotate a subscription's signing secret",
  description:
    "A new `secret`, shown only in this answer. For 24 hours (`previous_secret_expires_at`) every delivery carries two `v1=` signatures in `Service-Signature`, one made with the new secret and one with the previous, so the receiver can switch at leisure. Rotating again within the 24 hours keeps only the secret that was current.",
  tag: TAG,
  auth: "app",
  params: SubscriptionIdParams,
  response: { status: 200, description: "The subscription with its new secret.", schema: SubscriptionWithSecret },
  errors: ["not_found"],
});

export const sendTestEventOp = defineOperation({
  method: "POST",
  path: "/v1/app/webhooks/{id}/send-test-event",
  operationId: "sendWebhookTestEvent",
  summary: "Send a test event",
  description:
    "Queues a signed delivery of a `webhook.test` event to this subscription only, whatever `events` it covers, through the normal pipeline: it is retried and appears in the delivery log like any other. Its `athlete_id` is the id of the app's owner (the developer account that registered the app, not one of its athletes), `object_type` is `webhook_subscription` and `object_id` this subscription's id. A disabled subscription answers 409 `conflict`. Accepts `Idempotency-Key`: a retried request with the same key answers the same delivery and sends no second event.",
  tag: TAG,
  auth: "app",
  params: SubscriptionIdParams,
  idempotent: true,
  response: { status: 202, description: "The delivery, queued.", schema: Delivery },
  errors: ["not_found", "conflict", "idempotency_key_in_use", "idempotency_key_reused"],
});

export const listDeliveriesOp = defineOperation({
  method: "GET",
  path: "/v1/app/webhooks/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "List a subscription's deliveries",
  description:
    "The log of what the service sent and what the endpoint answered, newest first: each delivery with its event and every attempt (request headers and body, response status and body excerpt). A delivery never sent yet has `attempt_count: 0`; an attempt that got no HTTP answer is `outcome: \"not_sent\"` with `error` naming why, never confused with an endpoint that answered with an error (`outcome: \"response\"`, `response_status`). Filter with `status`.",
  tag: TAG,
  auth: "app",
  params: SubscriptionIdParams,
  query: ListDeliveriesQuery,
  response: { status: 200, description: "A page of deliveries.", schema: DeliveryList },
  errors: ["invalid_enum_value", "invalid_cursor", "not_found"],
});

export const getDeliveryOp = defineOperation({
  method: "GET",
  path: "/v1/app/webhooks/{id}/deliveries/{delivery_id}",
  operationId: "getWebhookDelivery",
  summary: "Get a delivery",
  tag: TAG,
  auth: "app",
  params: DeliveryIdParams,
  response: { status: 200, description: "The delivery with every attempt.", schema: Delivery },
  errors: ["not_found"],
});

export const redeliverDeliveryOp = defineOperation({
  method: "POST",
  path: "/v1/app/webhooks/{id}/deliveries/{delivery_id}/redeliver",
  operationId: "redeliverWebhookDelivery",
  summary: "Redeliver a delivery",
  description:
    `Sends the delivery again, whatever its state: the same event with the same \`id\` (deduplicate on it), signed afresh. It becomes \`pending\`, due now, with the whole retry schedule again (up to ${MAX_ATTEMPTS} more attempts), and its earlier attempts stay in the log. A disabled subscription answers 409 \`conflict\`: re-enable it first. So does an event of an athlete who has since disconnected the app: events stop together with the access.`,
  tag: TAG,
  auth: "app",
  params: DeliveryIdParams,
  response: { status: 202, description: "The delivery, queued again.", schema: Delivery },
  errors: ["not_found", "conflict"],
});
