import { describe, expect, it } from "vitest";
import { EVENT_KINDS, SUBSCRIBABLE_EVENT_TYPES } from "@/lib/events/catalog";
import { ATTEMPT_INTERRUPTED, CreateSubscriptionInput, type Delivery, type DeliveryAttempt } from "@/lib/webhooks/subscriptions/schemas";
import { CONSOLE_LIMIT_SCALE } from "@/lib/http/console-route";
import { getEnv } from "@/lib/env";
import { EVENT_OPTIONS, deliveryLogPollMs, deliveryOutcome, noteShownDeliveries, openDeliveryLog } from "./shared";

describe("the console's event options", () => {
  it("offer every kind a subscription may ask for, each with its catalog description and scope", () => {
    expect(EVENT_OPTIONS.map((o) => o.type)).toEqual(SUBSCRIBABLE_EVENT_TYPES);
    for (const o of EVENT_OPTIONS) {
      const kind = EVENT_KINDS[o.type];
      expect(o.label).toBe(kind.description);
      expect(o.scope).toBe("scope" in kind ? kind.scope : null);
    }
  });

  it("start with a selection the API accepts", () => {
    const events = EVENT_OPTIONS.filter((o) => o.checked).map((o) => o.type);
    expect(CreateSubscriptionInput.safeParse({ url: "https://hooks.example.com/h", events }).success).toBe(true);
  });
});

describe("the delivery logs' refreshes", () => {
  it("ask for at most a fifth of the person's console window, however many logs are open and pages loaded", () => {
    const windowPerSecond = (getEnv().rateLimit15Min * CONSOLE_LIMIT_SCALE) / (15 * 60);
    for (const open of [1, 2, 3, 10, 19, 20]) {
      for (const pages of [1, 2, 5]) {
        const requestsPerSecond = (open * pages * 1000) / deliveryLogPollMs(open, pages);
        expect(requestsPerSecond, `${open} logs, ${pages} pages`).toBeLessThanOrEqual(windowPerSecond / 5);
      }
    }
    // One log alone keeps its 3 s.
    expect(deliveryLogPollMs(1, 1)).toBe(3000);
  });

  it("count the logs open in the tab", () => {
    const closers = ["whs_a", "whs_b", "whs_c"].map(openDeliveryLog);
    expect(deliveryLogPollMs()).toBe(6000);
    for (const close of closers) close();
    expect(deliveryLogPollMs()).toBe(3000);
  });
});

describe("a delivery's outcome in the log", () => {
  const base = { id: "whd_1", subscription_id: "whs_1", event: null, next_attempt_at: null, created_at: "2026-12-01T00:00:00.000Z", failure_reason: null } as const;
  const attempt = (over: Partial<DeliveryAttempt>): DeliveryAttempt => ({
    attempt: 1,
    started_at: "2026-12-01T00:00:00.000Z",
    duration_ms: 5,
    outcome: "response",
    response_status: 204,
    response_body_excerpt: "",
    error: null,
    request_headers: {},
    request_body: "",
    ...over,
  });

  it("says why a delivery failed that was never sent, and that a pending one is not sent yet", () => {
    expect(deliveryOutcome({ ...base, status: "failed", attempt_count: 0, attempts: [], failure_reason: "athlete_disconnected" })).toBe(
      "Not sent: the athlete disconnected the app, so their events no longer go to it",
    );
    expect(deliveryOutcome({ ...base, status: "failed", attempt_count: 0, attempts: [], failure_reason: "subscription_disabled" })).toBe(
      "Not sent: the endpoint was disabled",
    );
    expect(deliveryOutcome({ ...base, status: "pending", attempt_count: 0, attempts: [] })).toBe("Not sent yet");
    // Failed before reasons were kept.
    expect(deliveryOutcome({ ...base, status: "failed", attempt_count: 0, attempts: [] })).toBe("Not sent: it failed");
  });

  it("gives the last attempt's answer, or why none came, an interrupted attempt included", () => {
    expect(deliveryOutcome({ ...base, status: "failed", attempt_count: 1, attempts: [attempt({ response_status: 500 })], failure_reason: "attempts_exhausted" })).toBe("HTTP 500");
    expect(
      deliveryOutcome({ ...base, status: "pending", attempt_count: 1, attempts: [attempt({ outcome: "not_sent", response_status: null, error: ATTEMPT_INTERRUPTED })] }),
    ).toBe("Interrupted: the service stopped before it recorded an answer");
    expect(deliveryOutcome({ ...base, status: "pending", attempt_count: 1, attempts: [attempt({ outcome: "not_sent", response_status: null, error: "dns" })] })).toBe(
      "Not sent: Host name not found",
    );
  });
});

describe("what a delivery log tells its endpoint's header", () => {
  const delivery = (id: string, minute: number, status: Delivery["status"], attempt_count: number): Delivery => ({
    id,
    subscription_id: "whs_a",
    event: null,
    status,
    failure_reason: null,
    attempt_count,
    next_attempt_at: null,
    created_at: `2026-12-04T07:${String(minute).padStart(2, "0")}:00.000Z`,
    attempts: [],
  });

  it("is nothing on the log's first load: the header was read with the page", () => {
    expect(noteShownDeliveries(null, [delivery("whd_1", 10, "failed", 3)]).moved).toBe(false);
  });

  it("is news when a delivery shown before changed state or was attempted again", () => {
    const { shown } = noteShownDeliveries(null, [delivery("whd_1", 10, "pending", 0)]);
    expect(noteShownDeliveries(shown, [delivery("whd_1", 10, "pending", 0)]).moved).toBe(false);
    expect(noteShownDeliveries(shown, [delivery("whd_1", 10, "pending", 1)]).moved).toBe(true);
    expect(noteShownDeliveries(shown, [delivery("whd_1", 10, "succeeded", 1)]).moved).toBe(true);
    expect(noteShownDeliveries(shown, [delivery("whd_1", 10, "failed", 0)]).moved).toBe(true);
  });

  it("is news when a new delivery shows up attempted already, not when it waits or is an older one loaded late", () => {
    const { shown } = noteShownDeliveries(null, [delivery("whd_2", 20, "succeeded", 1)]);
    expect(noteShownDeliveries(shown, [delivery("whd_3", 21, "pending", 0)]).moved).toBe(false);
    expect(noteShownDeliveries(shown, [delivery("whd_3", 21, "succeeded", 1)]).moved).toBe(true);
    // A filter or "Load older deliveries" shows deliveries made before the newest one shown.
    expect(noteShownDeliveries(shown, [delivery("whd_0", 5, "failed", 20)]).moved).toBe(false);
  });
});
