import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { oauthClients, users } from "./schema";
import { rowsOf } from "./client";
import { demoWorldAtStart, SeedRefused, seedDemoWorld } from "./seed";

const api = setupApi();

describe("a database that holds other people (CONTRACT §8: the seed refuses it)", () => {
  // First in the file: the database is empty until these people sign up.
  it("is refused when one of them signed up as ava@example.com: an address is not the demo world", async () => {
    const db = await api.db();
    await db.insert(users).values([
      { id: "ath_notthedemo1", email: "ava@example.com", name: "Ava Somebody", passwordHash: "x" },
      { id: "ath_notthedemo2", email: "zed@example.org", name: "Zed", passwordHash: "x" },
    ]);
    await expect(seedDemoWorld(db, { baseUrl: "http://localhost:3000" })).rejects.toBeInstanceOf(SeedRefused);
    // A start without SEED_DEMO finds no demo world to look after.
    expect(await demoWorldAtStart(db, { seed: false, baseUrl: "http://localhost:3000" })).toBe("absent");
    expect(await db.select({ id: oauthClients.clientId }).from(oauthClients)).toEqual([]);
    await db.delete(users);
  });
});

describe("the demo world on a service started again at another address (CONTRACT §8)", () => {
  it("keeps Demo Training Log's {BASE_URL}/demo/callback the current base URL's, and seeds nothing twice", async () => {
    const db = await api.db();
    expect(await seedDemoWorld(db, { baseUrl: "http://localhost:3000" })).toBe("seeded");
    const people = (await db.select({ id: users.id }).from(users)).length;
    const redirectUris = async () =>
      (await db.select({ r: oauthClients.redirectUris, home: oauthClients.homepageUrl }).from(oauthClients).where(eq(oauthClients.clientId, "demo-training-log")))[0];
    expect(await redirectUris()).toEqual({ r: ["http://127.0.0.1:8976/callback", "http://localhost:3000/demo/callback"], home: "http://localhost:3000/demo/callback" });

    expect(await seedDemoWorld(db, { baseUrl: "http://localhost:3312" })).toBe("present");
    expect(await redirectUris()).toEqual({ r: ["http://127.0.0.1:8976/callback", "http://localhost:3312/demo/callback"], home: "http://localhost:3312/demo/callback" });
    expect((await db.select({ id: users.id }).from(users)).length).toBe(people);

    // A URI the developer added stays; the same address again changes nothing.
    await db.update(oauthClients).set({ redirectUris: ["http://127.0.0.1:8976/callback", "http://localhost:3312/demo/callback", "https://log.example/cb"] }).where(eq(oauthClients.clientId, "demo-training-log"));
    expect(await seedDemoWorld(db, { baseUrl: "https://demo.example" })).toBe("present");
    expect((await redirectUris())!.r).toEqual(["http://127.0.0.1:8976/callback", "https://demo.example/demo/callback", "https://log.example/cb"]);

    // Seeded by `npm run db:seed` at its own address, served at another without SEED_DEMO (the
    // PostgreSQL default): the start still moves the demo callback to where the service is.
    expect(await demoWorldAtStart(db, { seed: false, baseUrl: "http://localhost:4200" })).toBe("present");
    expect((await redirectUris())!.r).toEqual(["http://127.0.0.1:8976/callback", "http://localhost:4200/demo/callback", "https://log.example/cb"]);
    expect((await db.select({ id: users.id }).from(users)).length).toBe(people);
  });

  it("records each demo activity after it ended, never before it started nor in the future", async () => {
    const db = await api.db();
    expect(["seeded", "present"]).toContain(await seedDemoWorld(db, { baseUrl: "http://localhost:3000" }));
    const result = await db.execute(sql`
      select count(*)::int as "all",
        count(*) filter (where a.created_at < (a.start_local at time zone p.timezone) + make_interval(secs => a.elapsed_time_s))::int as early,
        count(*) filter (where a.created_at > now())::int as future
      from activities a join athlete_profiles p on p.user_id = a.athlete_id`);
    const [counts] = rowsOf<{ all: number; early: number; future: number }>(result);
    expect(counts!.all).toBeGreaterThan(50);
    expect(counts).toMatchObject({ early: 0, future: 0 });
  });
});
