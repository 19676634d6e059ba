import { sql } from "drizzle-orm";
import { pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { setupApi } from "../testing/fixtures";
import { compiledInsert, compiledStatement, rowsOf, type Db } from "./client";
import { activities, events, personalAccessTokens } from "./schema";
import { inTransaction } from "./transaction";
import { appendEvent } from "../events/append-event";

const api = setupApi();

describe("compiledStatement", () => {
  it("builds its SQL once and gives each call its own values, in a transaction too", async () => {
    const db = await api.db();
    const person = await api.person();
    let built = 0;
    const echo = compiledStatement("test_echo", () => {
      built++;
      return sql`select ${sql.placeholder("a")}::int + ${sql.placeholder("b")}::int as sum, (select count(*) from ${personalAccessTokens})::int as pats`;
    });
    const sumOf = async (on: Db, a: number, b: number) => rowsOf<{ sum: number; pats: number }>(await echo(on, { a, b }))[0]!;
    expect((await sumOf(db, 1, 2)).sum).toBe(3);
    expect((await sumOf(db, 40, 2)).sum).toBe(42);
    const [a, b] = await Promise.all([sumOf(db, 5, 5), sumOf(db, 7, 1)]);
    expect([a.sum, b.sum]).toEqual([10, 8]);
    // Inside a transaction it sees the transaction's own writes, and they go with its rollback.
    const before = (await sumOf(db, 0, 0)).pats;
    await expect(
      db.transaction(async (tx) => {
        await tx.insert(personalAccessTokens).values({ id: "pat_compiled", userId: person.id, name: "t", tokenHash: "h".repeat(64), lastFour: "hhhh", scopes: [] });
        expect((await sumOf(tx, 1, 1)).pats).toBe(before + 1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await sumOf(db, 0, 0)).pats).toBe(before);
    expect(built).toBe(1);
  });
});

describe("compiledInsert", () => {
  // A column left out (`source`, `created_at`) takes its default; `distance_m` and `elevation_gain_m` are measures.
  const columns = ["id", "athleteId", "name", "sportType", "startLocal", "elapsedTimeS", "movingTimeS", "distanceM", "elevationGainM", "averageHeartRateHz"] as const;
  const insert = compiledInsert("test_insert_activity", activities, columns);
  const row = (id: string, athleteId: string) => ({
    id,
    athleteId,
    name: "Compiled",
    sportType: "run",
    startLocal: "2026-03-01 07:00:00",
    elapsedTimeS: 1800,
    movingTimeS: null,
    distanceM: 5000.04,
    elevationGainM: null,
    averageHeartRateHz: 2.345678,
  });

  it("writes the row as the builder would: encoders applied, null kept, defaults for the rest", async () => {
    const db = await api.db();
    const person = await api.person();
    const [made] = await insert(db, row("act_compiled_1", person.id));
    const [read] = await db.select().from(activities).where(sql`${activities.id} = 'act_compiled_1'`);
    // What the statement returned is the row as stored, typed as the builder's `.returning()` types it.
    expect(made).toEqual(read);
    expect(read).toMatchObject({ name: "Compiled", startLocal: "2026-03-01 07:00:00", elapsedTimeS: 1800 });
    // A measure's encoder rounds it (0.1 m, 0.0001 Hz); a null stays null (the encoder would make it 0).
    expect(read!.distanceM).toBe(5000);
    expect(read!.averageHeartRateHz).toBe(2.3457);
    expect(read!.movingTimeS).toBeNull();
    expect(read!.elevationGainM).toBeNull();
    // Columns it does not set take their defaults.
    expect(read!.source).toBe("manual");
    expect(read!.createdAt).toBeInstanceOf(Date);
    expect(Math.abs(read!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(insert.query().sql).toMatch(/^insert into "activities" \("id", "athlete_id", "name",/);
  });

  it("refuses to leave out a column whose default drizzle computes (the database would not)", () => {
    const stamped = pgTable("stamped", {
      id: text("id").primaryKey(),
      note: text("note"),
      madeAt: timestamp("made_at").$defaultFn(() => new Date()),
    });
    expect(() => compiledInsert("test_stamped", stamped, ["id", "note"])).toThrow(/madeAt must be given/);
    expect(compiledInsert("test_stamped", stamped, ["id", "note", "madeAt"]).query().sql).toMatch(/"made_at"/);
  });

  it("runs in a transaction and goes with its rollback", async () => {
    const db = await api.db();
    const person = await api.person();
    await expect(
      db.transaction(async (tx) => {
        await insert(tx, row("act_compiled_2", person.id));
        expect(await tx.$count(activities, sql`${activities.id} = 'act_compiled_2'`)).toBe(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await db.$count(activities, sql`${activities.id} = 'act_compiled_2'`)).toBe(0);
    // A refused row fails its call alone: the same statement then serves the next.
    await expect(insert(db, row("act_compiled_3", "usr_nobody"))).rejects.toThrow();
    await insert(db, row("act_compiled_3", person.id));
    expect(await db.$count(activities, sql`${activities.id} = 'act_compiled_3'`)).toBe(1);
  });

  it("sent together with the event in one transaction, a refused insert takes the event with it and its own error is thrown", async () => {
    const db = await api.db();
    const person = await api.person();
    const eventsOf = () => db.$count(events, sql`${events.objectId} = 'act_compiled_4'`);
    const attempt = inTransaction(db, async (tx) => {
      // As createActivity sends them: both before either answers.
      const [[made]] = await Promise.all([
        insert(tx, row("act_compiled_4", "usr_nobody")),
        appendEvent(tx, { type: "activity.created", athleteId: person.id, objectId: "act_compiled_4", objectType: "activity" }),
      ]);
      return made;
    });
    // The foreign key's refusal, not the "transaction is aborted" of the statement after it.
    await expect(attempt).rejects.toMatchObject({ cause: { code: "23503" } });
    expect(await eventsOf()).toBe(0);
    expect(await db.$count(activities, sql`${activities.id} = 'act_compiled_4'`)).toBe(0);
  });
});
