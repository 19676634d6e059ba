import { describe, expect, it } from "vitest";
import { canonicalTimezone, isValidTimezone, localDateTimeIn, timezones } from "./local";

describe("time zones", () => {
  it("takes today's IANA names of renamed zones as well as the old ones ICU lists, and reads both", () => {
    for (const tz of ["Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv", "Europe/Kiev", "America/Nuuk", "Asia/Ho_Chi_Minh", "UTC", "Europe/Oslo"]) {
      expect(isValidTimezone(tz), tz).toBe(true);
    }
    for (const tz of ["Mars/Olympus", "", "+05:30", "asia/kolkata"]) expect(isValidTimezone(tz), tz).toBe(false);
    const at = new Date("2026-01-01T00:00:00Z");
    expect(localDateTimeIn("Asia/Kolkata", at)).toBe("2026-01-01T05:30:00");
    expect(localDateTimeIn("Europe/Kyiv", at)).toBe(localDateTimeIn("Europe/Kiev", at));
  });

  it("takes the fixed-offset zones ICU keeps unlisted (Etc/GMT+12 is the only zone at UTC−12), with POSIX signs", () => {
    for (const tz of ["Etc/GMT+12", "Etc/GMT-14", "Etc/GMT+1"]) expect(isValidTimezone(tz), tz).toBe(true);
    for (const tz of ["Etc/GMT+13", "Etc/GMT-15", "Etc/GMT+0", "Etc/GMT-0"]) expect(isValidTimezone(tz), tz).toBe(false);
    const at = new Date("2026-01-01T00:00:00Z");
    expect(localDateTimeIn("Etc/GMT+12", at)).toBe("2025-12-31T12:00:00");
    expect(localDateTimeIn("Etc/GMT-14", at)).toBe("2026-01-01T14:00:00");
  });

  it("names the zone it takes for another name of it, and none for what is no zone", () => {
    expect(canonicalTimezone("Europe/Oslo")).toBe("Europe/Oslo");
    expect(canonicalTimezone("Asia/Calcutta")).toBe("Asia/Calcutta");
    expect(canonicalTimezone("US/Eastern")).toBe("America/New_York");
    expect(canonicalTimezone("Etc/UTC")).toBe("UTC");
    expect(canonicalTimezone("GMT")).toBe("UTC");
    expect(canonicalTimezone("europe/oslo")).toBe("Europe/Oslo");
    for (const tz of ["+05:30", "-08:00", "Mars/Olympus", "", "Etc/GMT+15", "../../etc/passwd", "a".repeat(100)]) expect(canonicalTimezone(tz), tz).toBeUndefined();
  });

  it("offers today's names to pick from, each once, UTC first", () => {
    const list = timezones();
    expect(list[0]).toBe("UTC");
    expect(list).toEqual(expect.arrayContaining(["Asia/Kolkata", "Europe/Kyiv", "Asia/Yangon", "Europe/Oslo", "Etc/GMT+12"]));
    for (const old of ["Asia/Calcutta", "Europe/Kiev", "Asia/Rangoon"]) expect(list).not.toContain(old);
    expect(new Set(list).size).toBe(list.length);
    expect(list.every(isValidTimezone)).toBe(true);
  });
});
