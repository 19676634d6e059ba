import { describe, expect, it } from "vitest";
import { EVENT_KINDS, SUBSCRIBABLE_EVENT_TYPES } from "@/lib/events/catalog";
import { CreateSubscriptionInput } from "@/lib/webhooks/subscriptions/schemas";
import { EVENT_OPTIONS } from "./shared";

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
