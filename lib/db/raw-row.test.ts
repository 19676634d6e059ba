import { describe, expect, expectTypeOf, it } from "vitest";
import { sql, type SQL } from "drizzle-orm";
import { alias, PgDialect } from "drizzle-orm/pg-core";
import { setupTestDatabase } from "../testing/db";
import { columnsOf, orNull, rowsAs, selectAs, type Db, type Nullable, type RawBigint, type RawRow, type RawValue } from "./client";
import { events, rateLimitCounters, uploadFiles, webhookDeliveries, webhookSubscriptions } from "./schema";

// Raw statements (typed SQL no builder writes) name their columns through the schema, and their
// rows are typed from it: what the drivers answer for each column's type, before drizzle maps it.

const d = alias(webhookDeliveries, "d");
const s = alias(webhookSubscriptions, "s");

describe("RawRow types a raw row from the schema", () => {
  it("gives each column what the drivers answer for its type, null where it is nullable", () => {
    expectTypeOf<RawValue<typeof d.id>>().toEqualTypeOf<string>();
    expectTypeOf<RawValue<typeof d.attemptCount>>().toEqualTypeOf<number>();
    // A text column with an enum: its values.
    expectTypeOf<RawValue<typeof d.status>>().toEqualTypeOf<"pending" | "succeeded" | "failed">();
    expectTypeOf<RawValue<typeof d.failureReason>>().toEqualTypeOf<"attempts_exhausted" | "subscription_disabled" | "athlete_disconnected" | null>();
    // Timestamps are not mapped to a Date in a raw row; bigints not to a number.
    expectTypeOf<RawValue<typeof d.updatedAt>>().toEqualTypeOf<string | Date>();
    expectTypeOf<RawValue<typeof d.lockedUntil>>().toEqualTypeOf<string | Date | null>();
    expectTypeOf<RawValue<typeof d.eventSeq>>().toEqualTypeOf<RawBigint>();
    expectTypeOf<RawValue<typeof events.seq>>().toEqualTypeOf<string | number | bigint>();
    // A custom type: its driver's data (xid8 as text, bytea as bytes); an array of text: strings.
    expectTypeOf<RawValue<typeof events.xact>>().toEqualTypeOf<string>();
    expectTypeOf<RawValue<typeof uploadFiles.bytes>>().toEqualTypeOf<Uint8Array>();
    expectTypeOf<RawValue<typeof webhookSubscriptions.events>>().toEqualTypeOf<string[]>();
    // An alias keeps no element type for an array column: the row says nothing of it.
    expectTypeOf<RawValue<typeof s.events>>().toEqualTypeOf<unknown>();
    // An expression: the type written beside it.
    expectTypeOf<RawValue<ReturnType<typeof sql<boolean>>>>().toEqualTypeOf<boolean>();
  });

  it("types a whole select list, a LEFT JOIN's columns with null, and a CTE's columns as they went in", () => {
    const cols = { id: d.id, attempt_count: d.attemptCount, locked_until: d.lockedUntil, probe: sql<boolean>`true` };
    expectTypeOf<RawRow<typeof cols>>().toEqualTypeOf<{ id: string; attempt_count: number; locked_until: string | Date | null; probe: boolean }>();
    expectTypeOf<Nullable<RawRow<{ url: typeof s.url }>>>().toEqualTypeOf<{ url: string | null }>();
    const joined = { ...cols, ...orNull({ url: s.url, sub_events: webhookSubscriptions.events }) };
    expectTypeOf<RawRow<typeof joined>>().toEqualTypeOf<{
      id: string;
      attempt_count: number;
      locked_until: string | Date | null;
      probe: boolean;
      url: string | null;
      sub_events: string[] | null;
    }>();
    expect(Object.keys(joined)).toEqual(["id", "attempt_count", "locked_until", "probe", "url", "sub_events"]);
    const outer = columnsOf("c", cols);
    expectTypeOf(outer.attempt_count).toEqualTypeOf<SQL<number>>();
    expectTypeOf<RawRow<{ attempts: typeof outer.attempt_count }>>().toEqualTypeOf<{ attempts: number }>();
    const row = {} as RawRow<typeof cols>;
    // @ts-expect-error: a column the select list does not name is not in its row
    void row.subscription_id;
    // @ts-expect-error: nor is one the schema does not have
    void { nope: d.attemptCounts };
    // @ts-expect-error: a nullable timestamp is no string
    const at: string = row.locked_until;
    void at;
  });
});

describe("selectAs", () => {
  const dialect = new PgDialect();
  const text = (q: ReturnType<typeof sql>) => dialect.sqlToQuery(q).sql;

  it("writes each column qualified by its table's alias, as the name given", () => {
    const cols = {
      id: d.id,
      subscription_id: d.subscriptionId,
      probe: sql<boolean>`${s.consecutiveFailures} > 0`,
      ...orNull({ url: s.url }),
    };
    expect(text(sql`select ${selectAs(cols)} from x`)).toBe(
      `select "d"."id" as id, "d"."subscription_id" as subscription_id, "s"."consecutive_failures" > 0 as probe, "s"."url" as url from x`,
    );
    // Without an alias, by the table's name.
    expect(text(sql`returning ${selectAs({ bucket: rateLimitCounters.bucket, count: rateLimitCounters.count })}`)).toBe(
      `returning "rate_limit_counters"."bucket" as bucket, "rate_limit_counters"."count" as count`,
    );
  });

  it("names a CTE's columns by the CTE, and refuses a name that would need quotes", () => {
    const c = columnsOf("c", { lapsed_until: d.lockedUntil, id: d.id });
    expect(text(sql`select ${selectAs({ until: c.lapsed_until, id: c.id })} from claimed c`)).toBe(`select c.lapsed_until as until, c.id as id from claimed c`);
    expect(() => selectAs({ subscriptionId: d.subscriptionId })).toThrow(/plain lower-case name/);
    expect(() => selectAs({ "id; drop table x": d.id })).toThrow(/plain lower-case name/);
  });
});

describe("a raw row as the driver answers it", () => {
  let db: Db;
  setupTestDatabase((opened) => {
    db = opened;
  });

  it("holds what RawRow says, on this database's driver", async () => {
    await db.insert(events).values({ id: "evt_raw", type: "activity.created", athleteId: "ath_raw", objectId: "act_raw", objectType: "activity" });
    await db.insert(rateLimitCounters).values({ bucket: "raw:15m", windowStart: new Date("2026-01-01T00:00:00Z"), count: 3 });
    const e = alias(events, "e");
    const r = alias(rateLimitCounters, "r");
    const cols = {
      seq: e.seq,
      id: e.id,
      occurred_at: e.occurredAt,
      fanned_out_at: e.fannedOutAt,
      xact: e.xact,
      window_start: r.windowStart,
      count: r.count,
      ...orNull({ missing: sql<RawValue<typeof r.bucket>>`null::text` }),
    };
    const rows = rowsAs(cols, await db.execute(sql`select ${selectAs(cols)} from ${events} ${e} cross join ${rateLimitCounters} ${r} where ${e.id} = 'evt_raw'`));
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(["string", "number", "bigint"]).toContain(typeof row.seq);
    expect(row.id).toBe("evt_raw");
    expect(typeof row.occurred_at === "string" || row.occurred_at instanceof Date).toBe(true);
    expect(row.fanned_out_at).toBeNull();
    expect(typeof row.xact).toBe("string");
    expect(new Date(row.window_start).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(row.count).toBe(3);
    expect(row.missing).toBeNull();
  });
});
