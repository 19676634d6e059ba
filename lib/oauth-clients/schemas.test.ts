import { describe, expect, it } from "vitest";
import { resetEnvForTests } from "../env";
import { assertValidRedirectUris } from "./redirect-uris";
import { RegisterAppInput, UpdateAppInput } from "./schemas";

describe("an app's name, shown to athletes on the consent screen and in /settings/apps", () => {
  const app = { kind: "confidential", redirect_uris: ["https://app.example.com/cb"] };

  it("holds no character that turns around or hides the words shown beside it", () => {
    for (const name of ["Training Log\u202e ,moc.live morf", "Train\u200bing Log", "Log\u2067x", "Log\u0007"]) {
      const parsed = RegisterAppInput.safeParse({ ...app, name });
      expect(parsed.success, JSON.stringify(name)).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/no control, bidi or zero-width characters/);
      expect(UpdateAppInput.safeParse({ name }).success, JSON.stringify(name)).toBe(false);
    }
  });

  it("may be any language's letters, digits, spaces and punctuation", () => {
    for (const name of ["Training Log", "Coach Ångström – 東京", "Løpeklubben (beta) #1", "تطبيق التدريب"]) {
      expect(RegisterAppInput.safeParse({ ...app, name }).success, name).toBe(true);
    }
  });
});

describe("an app's redirect URIs", () => {
  it("may name the service's own redirect page for /docs's Authorize at its base URL, http://localhost too; no other page there, nor another port", async () => {
    const saved = process.env.BASE_URL;
    process.env.BASE_URL = "http://localhost:3000";
    resetEnvForTests();
    try {
      const docs = "http://localhost:3000/docs/assets/oauth2-redirect.html";
      for (const kind of ["confidential", "public"] as const) expect(assertValidRedirectUris([docs], kind), kind).toEqual([docs]);
      for (const uri of ["http://localhost:3000/docs/assets/other.html", "http://localhost:3001/docs/assets/oauth2-redirect.html", `${docs}?x=1`]) {
        expect(() => assertValidRedirectUris([uri], "confidential"), uri).toThrow(/must not use localhost/);
      }
    } finally {
      if (saved === undefined) delete process.env.BASE_URL;
      else process.env.BASE_URL = saved;
      resetEnvForTests();
    }
  });
});
