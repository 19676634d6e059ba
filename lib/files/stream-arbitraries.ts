import fc from "fast-check";
import { STREAM_SCALE } from "./stream-codec";
import { STREAM_KEYS, type StreamKey, type Streams } from "./types";

// Test support: fast-check generators for streams, shared by the codec, JSON and downsampling tests.

const channelKeys = STREAM_KEYS.filter((k) => k !== "time_s");

/** Streams of any size with any subset of channels, any pattern of gaps and any magnitudes. */
export const arbStreams = (maxSize = 300): fc.Arbitrary<Streams> =>
  fc
  .record({
    size: fc.nat({ max: maxSize }),
    keys: fc.subarray([...channelKeys]),
    seed: fc.integer(),
  })
  .chain(({ size, keys }) => {
    const value = fc.oneof(
      fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: -300, max: 300 }),
      fc.constant(0),
    );
    const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { freq: 4 });
    const channel = (key: StreamKey) =>
      key === "latlng"
        ? fc.array(maybe(fc.tuple(fc.double({ min: -90, max: 90, noNaN: true }), fc.double({ min: -180, max: 180, noNaN: true }))), {
            minLength: size,
            maxLength: size,
          })
        : fc.array(maybe(value), { minLength: size, maxLength: size });
    return fc.record({
      size: fc.constant(size),
      time_s: fc
        .array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: size, maxLength: size })
        .map((steps) => {
          let t = 0;
          return steps.map((d, i) => (i === 0 ? 0 : (t += d)));
        }),
      ...Object.fromEntries(keys.map((k) => [k, channel(k)])),
    }) as fc.Arbitrary<Streams>;
  });


/** What decoding promises: each value rounded to its channel's precision. */
export function atPrecision(s: Streams): Streams {
  const out: Streams = { size: s.size, time_s: [] };
  for (const key of STREAM_KEYS) {
    const values = s[key] as (number | [number, number] | null)[] | undefined;
    if (!values) continue;
    const q = (v: number) => {
      const r = Math.round(v * STREAM_SCALE[key]) / STREAM_SCALE[key];
      return r === 0 ? 0 : r;
    };
    (out as Record<string, unknown>)[key] = values.map((v) =>
      v == null ? null : Array.isArray(v) ? [q(v[0]), q(v[1])] : q(v),
    );
  }
  return out;
}

