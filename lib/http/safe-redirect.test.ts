import { describe, expect, it } from "vitest";
import { safeReturnPath } from "./safe-redirect";

describe("safeReturnPath: sign-in is not an open redirect", () => {
  it("keeps same-site paths with their query", () => {
    expect(safeReturnPath("/oauth/authorize?client_id=a&scope=x%20y")).toBe("/oauth/authorize?client_id=a&scope=x%20y");
  });
  it.each(["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "", undefined, 42])(
    "refuses %s",
    (raw) => {
      expect(safeReturnPath(raw)).toBe("/activities");
    },
  );
});
