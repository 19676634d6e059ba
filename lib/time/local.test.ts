import { describe, expect, it } from "vitest";
import { isValidTimezone, localDateTimeIn, timezones } from "./local";

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

  it("offers today's names to pick from, each once, UTC first", () => {
    const list = timezones();
    expect(list[0]).toBe("UTC");
    expect(list).toEqual(expect.arrayContaining(["Asia/Kolkata", "Europe/Kyiv", "Asia/Yangon", "Europe/Oslo"]));
    for (const old of ["Asia/Calcutta", "Europe/Kiev", "Asia/Rangoon"]) expect(list).not.toContain(old);
    expect(new Set(list).size).toBe(list.length);
    expect(list.every(isValidTimezone)).toBe(true);
  });
});
