import { describe, expect, it } from "vitest";
import {
  formatAverage,
  formatDistance,
  formatDuration,
  formatElevation,
  formatLocal,
  formatPace,
  formatSpeed,
  fromMeters,
  fromMps,
  parseDuration,
  toElevationMeters,
  toMeters,
  toMps,
} from "./units";

describe("distances", () => {
  it("converts metres to km and miles and back", () => {
    expect(fromMeters(10_000, "metric")).toBe(10);
    expect(fromMeters(1609.344, "imperial")).toBe(1);
    expect(toMeters(13.1, "imperial")).toBeCloseTo(21_082.4, 1);
    expect(toMeters(fromMeters(42_195, "imperial"), "imperial")).toBeCloseTo(42_195, 6);
  });

  it("formats with two decimals and the unit", () => {
    expect(formatDistance(10_023, "metric")).toBe("10.02 km");
    expect(formatDistance(10_000, "imperial")).toBe("6.21 mi");
  });

  it("shows elevation in metres or feet", () => {
    expect(formatElevation(100, "metric")).toBe("100 m");
    expect(formatElevation(100, "imperial")).toBe("328 ft");
    expect(toElevationMeters(1000, "imperial")).toBeCloseTo(304.8, 6);
  });
});

describe("speed and pace", () => {
  it("converts m/s to km/h and mph and back", () => {
    expect(fromMps(10, "metric")).toBeCloseTo(36, 9);
    expect(fromMps(1609.344 / 3600, "imperial")).toBeCloseTo(1, 9);
    expect(toMps(36, "metric")).toBeCloseTo(10, 9);
    expect(toMps(fromMps(4.2, "imperial"), "imperial")).toBeCloseTo(4.2, 9);
    expect(formatSpeed(10, "metric")).toBe("36.0 km/h");
  });

  it("gives pace per mile: 8:00 /mi is 1609.344 m in 480 s", () => {
    expect(formatPace(1609.344 / 480, "imperial")).toBe("8:00 /mi");
    expect(formatPace(1000 / 300, "metric")).toBe("5:00 /km");
    expect(formatPace(0, "imperial")).toBe("—");
  });

  it("gives a swim's pace per 100 m or per 100 yd", () => {
    expect(formatPace(100 / 95, "metric", "swim")).toBe("1:35 /100 m");
    expect(formatPace(91.44 / 80, "imperial", "swim")).toBe("1:20 /100 yd");
    expect(formatPace(0, "metric", "swim")).toBe("—");
  });

  it("shows an average as km/h for metric and min/mile for imperial", () => {
    expect(formatAverage(1000 / 300, "metric")).toBe("12.0 km/h");
    expect(formatAverage(1609.344 / 450, "imperial")).toBe("7:30 /mi");
  });
});

describe("durations", () => {
  it("formats h:mm:ss, or m:ss under an hour", () => {
    expect(formatDuration(3723)).toBe("1:02:03");
    expect(formatDuration(59)).toBe("0:59");
    expect(formatDuration(2700)).toBe("45:00");
  });

  it("reads h:mm:ss, m:ss and bare minutes", () => {
    expect(parseDuration("1:02:03")).toBe(3723);
    expect(parseDuration("45:30")).toBe(2730);
    expect(parseDuration(" 45 ")).toBe(2700);
    expect(parseDuration("1.5")).toBe(90);
    expect(parseDuration("90:00")).toBe(5400);
  });

  it("refuses what is not a duration", () => {
    for (const bad of ["", "abc", "1:60", "1:60:00", "-5", "1:2:3:4"]) expect(parseDuration(bad)).toBeNull();
  });

  it("reads zero as zero, for the form to judge", () => {
    for (const zero of ["0", "0:00", "0:00:00", "0.001"]) expect(parseDuration(zero)).toBe(0);
  });
});

describe("local times", () => {
  it("shows the wall-clock time as stored, whatever the machine's zone", () => {
    expect(formatLocal("2026-03-01T07:30:00", undefined, "en-GB")).toBe("1 Mar 2026, 07:30");
    expect(formatLocal("2026-03-01T23:45:00", undefined, "en-GB")).toBe("1 Mar 2026, 23:45");
    expect(formatLocal("2026-03-01T00:15:00", undefined, "en-GB")).toBe("1 Mar 2026, 00:15");
  });
});
