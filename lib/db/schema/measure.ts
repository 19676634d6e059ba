import { customType } from "drizzle-orm/pg-core";

/**
 * What each measurement is worth, in decimal places of its SI unit: finer than any device
 * measures, coarse enough that a derived value (10 km in 3,000 s) reads 3.333 m/s, not
 * 3.3333333333333335. The OpenAPI document states each one (lib/activities/schemas.ts).
 */
export const PRECISION = {
  /** Metres: 0.1 m. */
  distance: 1,
  /** Metres per second: 1 mm/s. */
  speed: 3,
  /** Beats per second: 0.0001 Hz, under 0.01 beats a minute. */
  heartRate: 4,
  /** Watts: 0.1 W. */
  power: 1,
  /** Joules: 1 J. */
  energy: 0,
  /** Seconds, where a duration is not whole: 1 ms. */
  duration: 3,
} as const;

export function roundTo(value: number, places: number): number {
  const f = 10 ** places;
  return Math.round(value * f) / f;
}

/**
 * A `double precision` column whose values are stored rounded to `places` decimals: every write
 * through drizzle rounds, so every reader (JSON built in SQL or in JavaScript) sees the same
 * short number.
 */
export function measure(name: string, places: number) {
  return customType<{ data: number; driverData: number | string }>({
    dataType: () => "double precision",
    toDriver: (value) => roundTo(value, places),
    fromDriver: (value) => (typeof value === "string" ? Number(value) : value),
  })(name);
}
