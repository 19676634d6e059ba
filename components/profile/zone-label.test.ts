import { describe, expect, it } from "vitest";
import { zoneLabel } from "./zone-label";

describe("zoneLabel", () => {
  it("says a fixed-offset zone's offset the way people read it (POSIX signs are inverted), and spaces a zone's underscores", () => {
    expect(zoneLabel("Etc/GMT+12")).toBe("Etc/GMT+12 (UTC−12:00, no summer time)");
    expect(zoneLabel("Etc/GMT-5")).toBe("Etc/GMT-5 (UTC+05:00, no summer time)");
    expect(zoneLabel("America/New_York")).toBe("America/New York");
  });
});
