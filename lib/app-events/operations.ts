import { defineOperation } from "../http/operation";
import { AppEventList, ListAppEventsQuery } from "./schemas";

export const listAppEventsOp = defineOperation({
  method: "GET",
  path: "/v1/app/events",
  operationId: "listAppEvents",
  summary: "List the events the app was or would have been sent",
  description:
    "The events of the last 30 days that the app's subscriptions were or would have been sent, oldest first, to reconcile after an outage: compare their `id`s with the deliveries received. " +
    "The kind must be covered by one of the app's subscriptions (active or disabled) now; the athlete's authorization of the app and its scope are judged as of when each event occurred. So the events of an athlete who has since disconnected stay listed up to the disconnect, which the app was sent, and none after it (their `athlete.deauthorized` event is listed too), and an app with no subscriptions gets an empty list. Test events (`webhook.test`) are not listed. " +
    "Pass `next_cursor` as `after` for the next page (or as `cursor`, the name every other list pages with); on the last page it is null, and `after` set to the last event's `id` lists the events that occurred since.",
  tag: "Webhooks",
  auth: "app",
  query: ListAppEventsQuery,
  response: { status: 200, description: "A page of events, oldest first.", schema: AppEventList },
  errors: ["invalid_cursor", "invalid_parameter_combination"],
});
