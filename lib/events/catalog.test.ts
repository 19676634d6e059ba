import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../openapi/document";
import { CreateSubscriptionInput } from "../webhooks/subscriptions/schemas";
import { EVENT_KINDS, EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE, WebhookEvent } from "./catalog";

const root = path.resolve(__dirname, "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const full = path.join(dir, e);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|mjs)$/.test(e) && !e.endsWith(".test.ts") ? [full] : [];
  });
}

type Schema = { enum?: string[]; properties?: Record<string, Schema>; $ref?: string };

describe("the event catalog", () => {
  it("is the only list of event kinds in the service: any other file names at most one kind, the one it emits", () => {
    const lists: Record<string, string[]> = {};
    for (const file of ["lib", "app", "components", "inngest"].flatMap((d) => sourceFiles(path.join(root, d)))) {
      if (file === path.join(__dirname, "catalog.ts")) continue;
      const text = readFileSync(file, "utf8");
      const named = EVENT_TYPES.filter((t) => new RegExp(`["']${t.replaceAll(".", "\\.")}["']`).test(text));
      if (named.length > 1) lists[path.relative(root, file)] = named;
    }
    expect(lists, "take the kinds from lib/events/catalog.ts").toEqual({});
  });

  it("is sent: every kind an app can subscribe to is appended to the outbox somewhere in lib/ (a catalog entry alone offers an event nobody sends)", () => {
    const sources = sourceFiles(path.join(root, "lib")).map((file) => readFileSync(file, "utf8"));
    const unsent = SUBSCRIBABLE_EVENT_TYPES.filter((t) => {
      const call = new RegExp(`appendEvent\\([^)]*?type:\\s*["']${t.replaceAll(".", "\\.")}["']`, "s");
      return !sources.some((text) => call.test(text));
    });
    expect(unsent, "append each kind with appendEvent(…, { type: … }) where it happens").toEqual([]);
  });

  it("is the README's list: its Webhooks table lists every kind an app can subscribe to, in catalog order, and names the test event", () => {
    const row = readFileSync(path.join(root, "README.md"), "utf8").match(/^\| Events \| (.*)$/m)?.[1] ?? "";
    const kinds = (text: string) => [...text.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]);
    expect(kinds(row.split("Body:")[0]!)).toEqual(SUBSCRIBABLE_EVENT_TYPES);
    expect(new Set(kinds(row))).toEqual(new Set(EVENT_TYPES));
  });

  it("gives the OpenAPI document its kinds: subscriptions' enum, the payload's type and object type, one webhook each", () => {
    const doc = openApiDocument("http://localhost") as unknown as {
      components: { schemas: Record<string, Schema> };
      webhooks: Record<string, { post: { summary: string; requestBody: { content: Record<string, { schema: Schema }> } } }>;
    };
    expect(Object.keys(doc.webhooks)).toEqual(EVENT_TYPES);
    for (const [type, entry] of Object.entries(doc.webhooks)) {
      expect(entry.post.summary).toBe(EVENT_KINDS[type as keyof typeof EVENT_KINDS].description);
      expect(entry.post.requestBody.content["application/json"]!.schema.properties!.type).toMatchObject({ const: type });
    }
    const schemas = doc.components.schemas;
    expect(schemas.WebhookEventType!.enum).toEqual(SUBSCRIBABLE_EVENT_TYPES);
    expect(schemas.EventType!.enum).toEqual(EVENT_TYPES);
    const payload = schemas.WebhookEvent!.properties!;
    expect(payload.type!.$ref).toBe("#/components/schemas/EventType");
    expect(new Set(payload.object_type!.enum)).toEqual(new Set(Object.values(EVENT_KINDS).map((k) => k.objectType)));
  });

  it("decides what a subscription may ask for: every kind but the test event", () => {
    const accepted = EVENT_TYPES.filter((t) => CreateSubscriptionInput.safeParse({ url: "https://hooks.example.com/h", events: [t] }).success);
    expect(accepted).toEqual(SUBSCRIBABLE_EVENT_TYPES);
    expect(accepted).not.toContain(TEST_EVENT_TYPE);
    expect(EVENT_TYPES).toContain(TEST_EVENT_TYPE);
  });

  it("refuses a payload of an unknown kind or object type", () => {
    const event = { id: "evt_1", athlete_id: "usr_1", object_id: "act_1", occurred_at: "2026-03-01T06:30:00.000Z" };
    for (const [type, kind] of Object.entries(EVENT_KINDS)) {
      expect(WebhookEvent.safeParse({ ...event, type, object_type: kind.objectType }).success, type).toBe(true);
    }
    expect(WebhookEvent.safeParse({ ...event, type: "activity.archived", object_type: "activity" }).success).toBe(false);
    expect(WebhookEvent.safeParse({ ...event, type: TEST_EVENT_TYPE, object_type: "invoice" }).success).toBe(false);
  });
});
