import { describe, expect, it } from "vitest";
import { formatInstant } from "./format";

describe("formatInstant", () => {
  it("names the zone it reads an instant in, the one given or the runtime's", () => {
    const iso = "2026-12-01T12:07:00Z";
    expect(formatInstant(iso, "UTC")).toMatch(/12:07.*UTC$/);
    expect(formatInstant(iso, "America/Los_Angeles")).toMatch(/4:07.*(PST|GMT-8)$/);
    const runtime = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" }).formatToParts(new Date(iso)).find((p) => p.type === "timeZoneName")!.value;
    expect(formatInstant(iso).endsWith(runtime)).toBe(true);
  });
});
