import { describe, expect, it } from "vitest";
import postgres from "postgres";
import { randomBytes } from "node:crypto";
import { isDatabaseUnavailable } from "./db-errors";

// A real server's refusals to let a connection in: only the PostgreSQL server has databases and
// roles to refuse (PGlite over the wire accepts any name), so these run with TEST_DATABASE_URL.
describe.runIf(process.env.TEST_DATABASE_URL)("a server that answers but refuses the connection", () => {
  async function refusal(change: (url: URL) => void): Promise<unknown> {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    change(url);
    const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      return await client`select 1`.then(
        () => expect.unreachable("the server let the connection in"),
        (e: unknown) => e,
      );
    } finally {
      await client.end();
    }
  }

  it("is the database unreachable when the database does not exist (dropped, or being restored)", async () => {
    const err = await refusal((u) => (u.pathname = `/aas_gone_${randomBytes(4).toString("hex")}`));
    expect((err as { code?: string }).code).toBe("3D000");
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it("is the database unreachable when the role is refused (credentials rotated)", async () => {
    const err = await refusal((u) => (u.username = `aas_nobody_${randomBytes(4).toString("hex")}`));
    expect((err as { code?: string }).code).toBe("28000");
    expect(isDatabaseUnavailable(err)).toBe(true);
  });
});

describe("a query the database refused for what it asked", () => {
  it("is not the database unreachable", () => {
    expect(isDatabaseUnavailable(Object.assign(new Error("relation does not exist"), { code: "42P01" }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
  });
});
