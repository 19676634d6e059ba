import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESOLUTIONS, sampleIndices } from "./downsample";
import { decodeQuantised, decodeStreams, encodeStreams, sampleSetsOfQuantised, STREAM_PRECISION } from "./stream-codec";
import { arbStreams, atPrecision } from "./stream-arbitraries";
import { syntheticActivity } from "./synthetic";
import { STREAM_KEYS, type Streams } from "./types";

describe("stream codec", () => {
  it("gives back every value at its precision, for any channels, gaps and sizes", () => {
    fc.assert(
      fc.property(arbStreams(), (s) => {
        const bytes = encodeStreams(s);
        const back = decodeStreams(bytes);
        expect(back).toEqual(atPrecision(s));
        // Stable: what was decoded encodes to the same bytes.
        expect(Buffer.from(encodeStreams(back)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps the documented precision", () => {
    expect(STREAM_PRECISION.time_s).toBe(0.001);
    const s: Streams = {
      size: 2,
      time_s: [0, 1.23449],
      latlng: [
        [59.12345674, 10.98765436],
        [-33.1, -70.00000004],
      ],
      heart_rate_hz: [151 / 60, null],
      cadence_hz: [(87 + 3 / 128) / 60, 0],
      temperature_c: [21.34, -3.06],
    };
    const back = decodeStreams(encodeStreams(s));
    expect(back.time_s).toEqual([0, 1.234]);
    expect(back.latlng).toEqual([
      [59.1234567, 10.9876544],
      [-33.1, -70],
    ]);
    expect(back.heart_rate_hz![0]).toBe(151 / 60);
    expect(back.cadence_hz![0]! * 60).toBeCloseTo(87 + 3 / 128, 12);
    expect(back.temperature_c).toEqual([21.3, -3.1]);
  });

  it("takes well under 8 bytes per sample per channel for a 4-hour ride", () => {
    const { streams } = syntheticActivity({ hours: 4, seed: 7 });
    const bytes = encodeStreams(streams);
    const channels = STREAM_KEYS.filter((k) => streams[k] !== undefined).length;
    const perSample = bytes.length / (streams.size * channels);
    console.info(`codec: ${streams.size} samples × ${channels} channels = ${bytes.length} bytes, ${perSample.toFixed(2)} B/sample/channel`);
    expect(perSample).toBeLessThan(3);
    expect(decodeStreams(bytes)).toEqual(atPrecision(streams));
  });

  it("keeps the samples chosen for low and medium, as sampleIndices chooses them from what it stores", () => {
    const { streams } = syntheticActivity({ hours: 0.5, seed: 4 });
    const bytes = encodeStreams(streams);
    const q = decodeQuantised(bytes);
    const back = decodeStreams(bytes);
    expect([...q.indexSets!.keys()]).toEqual([RESOLUTIONS.low, RESOLUTIONS.medium]);
    expect(q.indexSets!.get(RESOLUTIONS.low)).toEqual(sampleIndices(back, RESOLUTIONS.low));
    expect(q.indexSets!.get(RESOLUTIONS.medium)).toEqual(sampleIndices(back, RESOLUTIONS.medium));
    // Fewer samples than a resolution: nothing to store for it.
    const small = decodeQuantised(encodeStreams({ size: 150, time_s: [...Array(150).keys()] }));
    expect([...small.indexSets!.keys()]).toEqual([RESOLUTIONS.low]);
  });

  it("chooses from the stored integers exactly the samples sampleIndices chooses from the decoded streams", () => {
    fc.assert(
      fc.property(arbStreams(), fc.integer({ min: 2, max: 40 }), (s, max) => {
        const bytes = encodeStreams(s);
        const back = decodeStreams(bytes);
        expect(sampleSetsOfQuantised(decodeQuantised(bytes), [max])[0]).toEqual(sampleIndices(back, max));
      }),
      { numRuns: 300 },
    );
    const { streams } = syntheticActivity({ hours: 1, seed: 9 });
    const bytes = encodeStreams(streams);
    const maxes = [RESOLUTIONS.low, RESOLUTIONS.medium, RESOLUTIONS.high];
    const sets = sampleSetsOfQuantised(decodeQuantised(bytes), maxes);
    maxes.forEach((max, i) => expect(sets[i]).toEqual(sampleIndices(decodeStreams(bytes), max)));
  });

  it("decodes only the channels asked for", () => {
    const { streams } = syntheticActivity({ hours: 0.1, seed: 4 });
    const q = decodeQuantised(encodeStreams(streams), ["time_s", "power_w"]);
    expect(Object.keys(q.channels)).toEqual(["time_s", "power_w"]);
  });

  it("refuses values it cannot hold", () => {
    expect(() => encodeStreams({ size: 1, time_s: [Number.NaN] })).toThrow(RangeError);
    expect(() => encodeStreams({ size: 1, time_s: [0], power_w: [Infinity] })).toThrow(RangeError);
    expect(() => encodeStreams({ size: 1, time_s: [0], distance_m: [1e20] })).toThrow(RangeError);
    expect(() => encodeStreams({ size: 2, time_s: [0], power_w: [1, 2] })).toThrow(RangeError);
    expect(() => encodeStreams({ size: 1, time_s: [null as unknown as number] })).toThrow(RangeError);
  });

  describe("corrupt bytes are an Error, never a hang or a huge allocation", () => {
    const good = encodeStreams(syntheticActivity({ hours: 0.05, seed: 3 }).streams);

    it("every truncation", () => {
      for (let n = 0; n < good.length; n++) expect(() => decodeStreams(good.subarray(0, n))).toThrow(Error);
    });

    it("any flipped byte", () => {
      fc.assert(
        fc.property(fc.nat({ max: good.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, x) => {
          const bad = good.slice();
          bad[at]! ^= x;
          expect(() => decodeStreams(bad)).toThrow(Error);
        }),
      );
    });

    it("random bytes", () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
          expect(() => decodeStreams(bytes)).toThrow(Error);
        }),
      );
    });

    it("a valid checksum over a lying header", async () => {
      const { crc32 } = await import("node:zlib");
      const withCrc = (body: number[]) => {
        const c = crc32(Uint8Array.from(body));
        return Uint8Array.from([...body, c & 255, (c >>> 8) & 255, (c >>> 16) & 255, c >>> 24]);
      };
      // size 2^49 samples claimed in a few bytes
      expect(() => decodeStreams(withCrc([1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 0]))).toThrow(/size/);
      expect(() => decodeStreams(withCrc([2, 1, 1, 0, 0]))).toThrow(/version/);
      expect(() => decodeStreams(withCrc([1, 1, 2, 0, 0]))).toThrow(/mask/);
      expect(() => decodeStreams(withCrc([1, 1, 1, 0, 1, 4, 0, 0]))).toThrow(/trailing/);
      expect(() => decodeStreams(withCrc([1, 1, 1, 0, 2, 4, 0]))).toThrow(/channel/);
      expect(() => decodeStreams(withCrc([1, 1, 1, 0, 1, 4, 1, 100, 1]))).toThrow(/index set/);
      expect(decodeStreams(withCrc([1, 1, 1, 0, 1, 4, 0]))).toEqual({ size: 1, time_s: [0.002] });
    });
  });
});
