import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { setupApi } from "../testing/fixtures";
import { compiledStatement, rowsOf, type Db } from "./client";
import { personalAccessTokens } from "./schema";

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
