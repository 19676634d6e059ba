import { describe, expect, it } from "vitest";
import { sessionCookieFor } from "@/lib/auth/test-session";
import { setupApi } from "@/lib/testing/fixtures";

const api = setupApi();

async function register(userId: string, body: object) {
  return fetch(`${api.url}/api/console/apps`, {
    method: "POST",
    headers: { cookie: await sessionCookieFor(userId), origin: api.url, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const fieldsOf = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(400);
  return Object.fromEntries(((await res.json()) as { errors: { field: string; detail: string }[] }).errors.map((e) => [e.field, e.detail]));
};

describe("POST /api/console/apps: every field's problem at once", () => {
  it("names a bad redirect URI along with a missing name and a bad logo and homepage, not only once those are fixed", async () => {
    const dev = await api.person();
    const fields = await fieldsOf(
      await register(dev.id, {
        name: "",
        kind: "confidential",
        redirect_uris: ["https://log.example.com/callback", "http://log.example.com/cb", "com.example.app:/cb"],
        logo_url: "http://log.example.com/logo.png",
        homepage_url: "not a url",
      }),
    );
    expect(fields).toEqual({
      name: "give the app a name",
      logo_url: "must be an https:// URL",
      homepage_url: "must be an absolute URL, such as https://example.com",
      "redirect_uris.1": '"http://log.example.com/cb" must use https:// (plain http:// is allowed only for the loopback addresses 127.0.0.1 and [::1])',
      "redirect_uris.2": '"com.example.app:/cb" must use https:// for a confidential app (custom schemes are for public, native apps)',
    });
  });

  it("says each problem once: a URI too long and an empty list, as the schema says them", async () => {
    const dev = await api.person();
    const long = `https://log.example.com/cb?${"a".repeat(3000)}`;
    expect(await fieldsOf(await register(dev.id, { name: "", kind: "public", redirect_uris: [long, "myapp:/cb"] }))).toEqual({
      name: "give the app a name",
      "redirect_uris.0": "redirect URI 1 (https://log.example.com/cb?aaaaaaaaaaaaa…) is longer than 2000 characters",
      "redirect_uris.1": '"myapp:/cb" must use https://, or a private-use scheme in reverse-domain form such as com.example.app:/callback (RFC 8252 §7.1)',
    });
    expect(await fieldsOf(await register(dev.id, { name: "", kind: "public", redirect_uris: [] }))).toEqual({
      name: "give the app a name",
      redirect_uris: "register at least one redirect URI",
    });
  });

  it("leaves a body whose other fields are valid to the registration, which names the URI as before", async () => {
    const dev = await api.person();
    expect(await fieldsOf(await register(dev.id, { name: "Log", kind: "confidential", redirect_uris: ["http://log.example.com/cb"] }))).toEqual({
      "redirect_uris.0": '"http://log.example.com/cb" must use https:// (plain http:// is allowed only for the loopback addresses 127.0.0.1 and [::1])',
    });
    const ok = await register(dev.id, { name: "Log", kind: "confidential", redirect_uris: ["https://log.example.com/cb"] });
    expect(ok.status, await ok.clone().text()).toBe(201);
  });
});
