import { describe, expect, it } from "vitest";
import { asSentence, formatInstant } from "./format";

describe("formatInstant", () => {
  it("names the zone it reads an instant in, the one given or the runtime's", () => {
    const iso = "2026-12-01T12:07:00Z";
    expect(formatInstant(iso, "UTC")).toMatch(/12:07.*UTC$/);
    expect(formatInstant(iso, "America/Los_Angeles")).toMatch(/4:07.*(PST|GMT-8)$/);
    const runtime = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" }).formatToParts(new Date(iso)).find((p) => p.type === "timeZoneName")!.value;
    expect(formatInstant(iso).endsWith(runtime)).toBe(true);
  });
});

describe("asSentence", () => {
  it("makes a service's field detail a sentence, and leaves one alone", () => {
    expect(asSentence("give the token a name")).toBe("Give the token a name.");
    expect(asSentence("must be in the years 1900 to 2200")).toBe("Must be in the years 1900 to 2200.");
    expect(asSentence('"not a url" must not contain spaces')).toBe('"not a url" must not contain spaces.');
    expect(asSentence("Enter a name.")).toBe("Enter a name.");
    expect(asSentence("Is this it?")).toBe("Is this it?");
    // What a detail is about keeps its own letters.
    expect(asSentence("fe80::1 is a link-local or cloud metadata address")).toBe("fe80::1 is a link-local or cloud metadata address.");
    expect(asSentence("example.com resolves only to non-public addresses")).toBe("example.com resolves only to non-public addresses.");
  });
});
