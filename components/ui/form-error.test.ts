import { describe, expect, it } from "vitest";
import { ConsoleApiError } from "@/components/console/api";
import { formErrorLines } from "./form-error";

describe("a form's error above its fields", () => {
  it("says nothing of a problem its field already shows: one message, not two", () => {
    const e = new ConsoleApiError("The request body is invalid: name: give the token a name", 400, "invalid_request", { name: "give the token a name" });
    expect(formErrorLines(e, ["name", "scopes"])).toEqual([]);
  });

  it("says a problem of a field the form does not show, in words", () => {
    const e = new ConsoleApiError("The request body is invalid: …", 400, "invalid_request", { name: "give the token a name", expires_in_days: "must be 7, 30, 90 or 365" });
    expect(formErrorLines(e, ["name"])).toEqual(["Must be 7, 30, 90 or 365."]);
  });

  it("counts a member of a shown field as shown (redirect_uris.1)", () => {
    const e = new ConsoleApiError("…", 400, "invalid_redirect_uri", { "redirect_uris.1": "must be https" });
    expect(formErrorLines(e, ["redirect_uris"])).toEqual([]);
  });

  it("says the service's message when the problem names no field", () => {
    expect(formErrorLines(new ConsoleApiError("You have too many tokens.", 409, "conflict"), ["name"])).toEqual(["You have too many tokens."]);
    expect(formErrorLines(null, ["name"])).toEqual([]);
  });
});
