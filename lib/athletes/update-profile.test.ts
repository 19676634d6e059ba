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

describe("PATCH /api/console/profile: timezones", () => {
  it("takes Etc/GMT+12 (the only zone at UTC−12), and refuses another name of a zone saying which to send", async () => {
    const ok = await patchProfile({ timezone: "Etc/GMT+12" });
    expect(ok.status).toBe(200);
    expect((await ok.json()).timezone).toBe("Etc/GMT+12");
    const alias = await (await patchProfile({ timezone: "US/Eastern" })).json();
    expect(alias.errors).toEqual([{ field: "timezone", code: "invalid_enum_value", detail: "must be an IANA timezone name: send America/New_York, this service's name for that zone" }]);
    const none = await (await patchProfile({ timezone: "+05:30" })).json();
    expect(none.errors).toEqual([{ field: "timezone", code: "invalid_enum_value", detail: "must be an IANA timezone name" }]);
  });
});
