import { describe, expect, it } from "vitest";
import { EVENT_KINDS, SUBSCRIBABLE_EVENT_TYPES } from "@/lib/events/catalog";
import { CreateSubscriptionInput } from "@/lib/webhooks/subscriptions/schemas";
import { CONSOLE_LIMIT_SCALE } from "@/lib/http/console-route";
import { getEnv } from "@/lib/env";
import { EVENT_OPTIONS, deliveryLogPollMs, openDeliveryLog } from "./shared";

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
