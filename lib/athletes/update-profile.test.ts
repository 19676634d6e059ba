import { describe, expect, it } from "vitest";
import { sessionCookieFor } from "../auth/test-session";
import { setupApi } from "../testing/fixtures";

const api = setupApi();

async function patchProfile(body: unknown) {
  const person = await api.person();
  return fetch(`${api.url}/api/console/profile`, {
    method: "PATCH",
    headers: { cookie: await sessionCookieFor(person.id), origin: api.url, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("PATCH /api/console/profile: a refused name is said in words (the settings page shows them at the field)", () => {
  it("an empty name asks for one, not zod's 'Too small: expected string to have >=1 characters'", async () => {
    const res = await patchProfile({ name: "   " });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors).toEqual([{ field: "name", code: "invalid_request", detail: "enter your name" }]);
    expect(body.detail).not.toMatch(/Too small|expected string/);
  });

  it("a name over 100 characters says the limit", async () => {
    const body = await (await patchProfile({ name: "x".repeat(101) })).json();
    expect(body.errors).toEqual([{ field: "name", code: "invalid_request", detail: "use at most 100 characters" }]);
  });
});
