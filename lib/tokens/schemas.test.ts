import { describe, expect, it } from "vitest";
import { sessionCookieFor } from "../auth/test-session";
import { setupApi } from "../testing/fixtures";
import { PAT_NAME_MAX_LENGTH } from "./schemas";

const api = setupApi();

describe("POST /api/console/tokens: a refused name is said in words", () => {
  it("a name over 100 characters says the limit, not zod's 'Too big: expected string to have <=100 characters'", async () => {
    const person = await api.person();
    const res = await fetch(`${api.url}/api/console/tokens`, {
      method: "POST",
      headers: { cookie: await sessionCookieFor(person.id), origin: api.url, "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(PAT_NAME_MAX_LENGTH + 1), scopes: ["athlete.read"], expires_in_days: 30 }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors).toEqual([{ field: "name", code: "invalid_request", detail: "use at most 100 characters" }]);
    expect(body.detail).not.toMatch(/Too big|expected string/);
  });

  it("a name with a bidi override or a zero-width character is refused: it would read as another in the token list", async () => {
    const person = await api.person();
    for (const name of ["deploy\u202Egnp.exe", "ci\u200Btoken"]) {
      const res = await fetch(`${api.url}/api/console/tokens`, {
        method: "POST",
        headers: { cookie: await sessionCookieFor(person.id), origin: api.url, "content-type": "application/json" },
        body: JSON.stringify({ name, scopes: ["athlete.read"], expires_in_days: 30 }),
      });
      expect(res.status, name).toBe(400);
      expect((await res.json()).errors).toEqual([expect.objectContaining({ field: "name" })]);
    }
  });
});
