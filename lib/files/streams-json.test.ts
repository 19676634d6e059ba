import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESOLUTIONS } from "./downsample";
import { decodeStreams, encodeStreams } from "./stream-codec";
import { arbStreams, atPrecision } from "./stream-arbitraries";
import { cachedStreamsAnswer, clearStreamsJsonCache, streamsJson, streamsJsonBytesFromStored, streamsJsonFromStored } from "./streams-json";
import { syntheticActivity } from "./synthetic";
import { STREAM_KEYS, type StreamKey, type Streams } from "./types";

/** The answer written the obvious way: the reference the fast writer must equal. */
function reference(id: string, resolution: string, s: Streams, keys: readonly StreamKey[], indices?: number[]) {
  const p = atPrecision(s);
  const pick = indices ?? Array.from({ length: s.size }, (_, i) => i);
  const streams: Record<string, unknown> = {};
  for (const key of STREAM_KEYS) {
    const values = p[key] as unknown[] | undefined;
    if (!values || !keys.includes(key) || s.size === 0) continue;
    streams[key] = pick.map((i) => values[i]);
  }
  return { activity_id: id, resolution, original_size: s.size, size: pick.length, streams };
}

describe("streamsJson", () => {
  it("equals the obvious JSON, for any streams, keys and indices", () => {
    fc.assert(
      fc.property(
        arbStreams(),
        fc.subarray([...STREAM_KEYS]),
        fc.boolean(),
        fc.string(),
        (s, keys, sub, id) => {
          const indices = sub ? Array.from({ length: s.size }, (_, i) => i).filter((i) => i % 3 === 0) : undefined;
          const text = streamsJson({ activityId: id, resolution: "full", streams: s, keys, indices });
          expect(JSON.parse(text)).toEqual(reference(id, "full", s, keys, indices));
          if (!indices) {
            expect(streamsJsonFromStored({ activityId: id, resolution: "full", data: encodeStreams(s), keys })).toBe(text);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("answers each resolution from the stored bytes as from the streams", () => {
    const { streams } = syntheticActivity({ hours: 3, seed: 21 });
    const data = encodeStreams(streams);
    const decoded = decodeStreams(data);
    for (const resolution of ["low", "medium", "high", "full"] as const) {
      for (const keys of [STREAM_KEYS, ["heart_rate_hz", "time_s"] as const]) {
        const text = streamsJsonFromStored({ activityId: "act_x", resolution, data, keys });
        expect(text).toBe(streamsJson({ activityId: "act_x", resolution, streams: decoded, keys }));
        const answer = JSON.parse(text);
        expect(answer.size).toBe(Math.min(streams.size, RESOLUTIONS[resolution]));
        expect(answer.streams.time_s[0]).toBe(0);
        expect(answer.streams.time_s.at(-1)).toBe(decoded.time_s.at(-1));
      }
    }
  });

  it("answers from the cache only for the same stored value, resolution and keys", () => {
    const a = encodeStreams(syntheticActivity({ hours: 0.2, seed: 1 }).streams);
    const b = encodeStreams(syntheticActivity({ hours: 0.2, seed: 2 }).streams);
    const args = { activityId: "act_same", resolution: "full" as const, keys: STREAM_KEYS };
    const asA = { data: a, version: "100", length: a.length };
    const asB = { data: b, version: "101", length: b.length };
    const first = Buffer.from(streamsJsonBytesFromStored({ ...args, ...asA })).toString();
    expect(Buffer.from(streamsJsonBytesFromStored({ ...args, ...asB })).toString()).toBe(streamsJsonFromStored({ ...args, data: b }));
    expect(Buffer.from(streamsJsonBytesFromStored({ ...args, ...asA })).toString()).toBe(first);
    const hr = Buffer.from(streamsJsonBytesFromStored({ ...args, ...asA, keys: ["heart_rate_hz"] })).toString();
    expect(Object.keys(JSON.parse(hr).streams)).toEqual(["heart_rate_hz"]);
    expect(JSON.parse(Buffer.from(streamsJsonBytesFromStored({ ...args, ...asA, resolution: "low" })).toString()).size).toBe(100);
  });

  it("writes compact JSON in contract order with the shortest decimals", () => {
    const s: Streams = {
      size: 2,
      time_s: [0, 1.5],
      power_w: [200, null],
      latlng: [
        [59.91, -10.0000001],
        null,
      ],
      heart_rate_hz: [2.5, 151 / 60],
      altitude_m: [-0.05, 12.1],
    };
    expect(streamsJson({ activityId: "act_1", resolution: "full", streams: s, keys: STREAM_KEYS })).toBe(
      '{"activity_id":"act_1","resolution":"full","original_size":2,"size":2,"streams":{' +
        '"time_s":[0,1.5],"latlng":[[59.91,-10.0000001],null],"altitude_m":[-0.05,12.1],' +
        '"heart_rate_hz":[2.5,2.5166666666666666],"power_w":[200,null]}}',
    );
  });

  it("answers streams {} for an activity without samples", () => {
    expect(JSON.parse(streamsJson({ activityId: "a", resolution: "full", streams: { size: 0, time_s: [] }, keys: STREAM_KEYS }))).toEqual({
      activity_id: "a",
      resolution: "full",
      original_size: 0,
      size: 0,
      streams: {},
    });
  });

  it("refuses indices outside the streams", () => {
    const s: Streams = { size: 2, time_s: [0, 1] };
    expect(() => streamsJson({ activityId: "a", resolution: "low", streams: s, keys: STREAM_KEYS, indices: [0, 2] })).toThrow(RangeError);
  });

});

describe("cachedStreamsAnswer", () => {
  it("gives a kept answer by the stored value's identity (row version and length) alone, and nothing for another version", () => {
    clearStreamsJsonCache();
    const data = encodeStreams(syntheticActivity({ hours: 0.2, hz: 1, seed: 7 }).streams);
    const args = { activityId: "act_cache", resolution: "medium" as const, keys: STREAM_KEYS };
    const identity = { version: "7001", length: data.length };
    expect(cachedStreamsAnswer({ ...args, ...identity })).toBeUndefined();
    const made = streamsJsonBytesFromStored({ ...args, ...identity, data });
    expect(cachedStreamsAnswer({ ...args, ...identity })).toBe(made);
    expect(cachedStreamsAnswer({ ...args, ...identity, version: "7002" })).toBeUndefined();
    expect(cachedStreamsAnswer({ ...args, ...identity, length: data.length + 1 })).toBeUndefined();
    expect(cachedStreamsAnswer({ ...args, keys: ["time_s"], ...identity })).toBeUndefined();
    expect(cachedStreamsAnswer({ ...args, activityId: "act_other", ...identity })).toBeUndefined();
  });
});
