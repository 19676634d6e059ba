import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESOLUTIONS, sampleIndices } from "./downsample";
import { arbStreams } from "./stream-arbitraries";
import { syntheticActivity } from "./synthetic";
import type { Streams } from "./types";

describe("sampleIndices", () => {
  it("is bounded, sorted, unique, keeps the first and the last, for any streams and max", () => {
    fc.assert(
      fc.property(arbStreams(400), fc.integer({ min: 2, max: 500 }), (s, max) => {
        const idx = sampleIndices(s, max);
        expect(idx.length).toBe(Math.min(max, s.size));
        for (let j = 1; j < idx.length; j++) expect(idx[j]!).toBeGreaterThan(idx[j - 1]!);
        if (s.size > 0) {
          expect(idx[0]).toBe(0);
          expect(idx.at(-1)).toBe(s.size - 1);
        }
        for (const i of idx) expect(Number.isInteger(i) && i >= 0 && i < s.size).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("gives every index when max is at least the size", () => {
    const s = syntheticActivity({ hours: 0.02, seed: 2 }).streams;
    expect(sampleIndices(s, s.size)).toEqual([...Array(s.size).keys()]);
    expect(sampleIndices(s, RESOLUTIONS.full)).toHaveLength(s.size);
  });

  it("keeps the extreme of a one-sample spike or dip in any channel of a ride", () => {
    // A bucket keeps one sample: where two features share one, the larger (each channel scaled
    // to its range) wins. The ride's cadence drops to 0 and back when coasting, features as large
    // as any spike, so it is left out here to leave the spike the one feature of its bucket.
    const { cadence_hz: _cadence, ...base } = syntheticActivity({ hours: 0.5, seed: 13 }).streams;
    type Key = "power_w" | "heart_rate_hz" | "speed_mps" | "altitude_m";
    const jumps: Record<Key, number> = { power_w: 900, heart_rate_hz: 1, speed_mps: 9, altitude_m: 60 };
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: base.size - 2 }),
        fc.constantFrom(...(Object.keys(jumps) as Key[])),
        fc.boolean(),
        fc.integer({ min: 100, max: 1000 }),
        (at, key, down, max) => {
          // (a spike in the ride, at any place, including beside the heart-rate dropout and the pause)
          const s: Streams = { ...base, [key]: [...base[key]!] };
          const values = s[key]!;
          fc.pre(values[at] != null);
          values[at] = (values[at] as number) + (down && key === "altitude_m" ? -jumps[key] : jumps[key]);
          expect(sampleIndices(s, max)).toContain(at);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("keeps a spike in a channel alone, for any max", () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 2000 }), fc.integer({ min: 3, max: 300 }), fc.double({ min: 0, max: 1, noNaN: true }), (size, max, where) => {
        const at = 1 + Math.floor(where * (size - 2));
        const power = Array.from({ length: size }, (_, i) => 200 + 20 * Math.sin(i / 7));
        power[at] = 1200;
        const idx = sampleIndices({ size, time_s: power.map((_, i) => i), power_w: power }, Math.min(max, size - 1));
        expect(idx).toContain(at);
      }),
    );
  });

  it("keeps the summit and the valley of a ride's altitude at low resolution", () => {
    const { streams } = syntheticActivity({ hours: 2, seed: 5 });
    const alt = streams.altitude_m! as number[];
    const idx = sampleIndices({ size: streams.size, time_s: streams.time_s, altitude_m: alt }, RESOLUTIONS.low);
    const kept = idx.map((i) => alt[i]!);
    // Within 1 % of the climb of the true extremes: the summit's bucket may keep the sample
    // beside the top where the curve turns most sharply.
    const range = Math.max(...alt) - Math.min(...alt);
    expect(Math.max(...kept)).toBeGreaterThanOrEqual(Math.max(...alt) - range / 100);
    expect(Math.min(...kept)).toBeLessThanOrEqual(Math.min(...alt) + range / 100);
  });

  it("keeps every channel's highest and lowest sample, whatever another channel does beside it", () => {
    // garmin-edge-500-activity.fit at `low` lost its lowest altitude (58.8 m shown as 69.2) and
    // highest cadence to other channels' turns in the same buckets.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 20, max: 300 }), (seed, max) => {
        const { streams } = syntheticActivity({ hours: 0.5, seed });
        const idx = new Set(sampleIndices(streams, max));
        for (const key of ["altitude_m", "heart_rate_hz", "power_w", "speed_mps", "cadence_hz"] as const) {
          const values = (streams[key] ?? []) as (number | null)[];
          const present = values.filter((v): v is number => v != null);
          if (present.length === 0) continue;
          const kept = [...idx].map((i) => values[i]).filter((v): v is number => v != null);
          expect({ key, max: Math.max(...kept), min: Math.min(...kept) }).toEqual({ key, max: Math.max(...present), min: Math.min(...present) });
        }
      }),
      { numRuns: 60 },
    );
  });

  it("refuses a max below two", () => {
    expect(() => sampleIndices({ size: 5, time_s: [0, 1, 2, 3, 4] }, 1)).toThrow(RangeError);
  });
});
