import { describe, expect, it } from "vitest";
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
