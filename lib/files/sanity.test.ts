import { describe, expect, it } from "vitest";
import { LIMITS, SampleBudget, SampleBuilder, cleanName, cleanPosition, finishActivity, haversine } from "./sanity";
import { FileError } from "./types";
import { ActivityName } from "../activities/schemas";

const T0 = Date.UTC(2024, 0, 1) / 1000;

function build(samples: { at: number; alt?: number; speed?: number; lat?: number; lng?: number; bpm?: number }[]) {
  const b = new SampleBuilder(new SampleBudget());
  for (const s of samples) b.push({ t: T0 + s.at, altitudeM: s.alt, speedMps: s.speed, lat: s.lat, lng: s.lng, heartRateBpm: s.bpm });
  return b;
}

describe("sample checks", () => {
  it("elevation gain ignores wobble below the hysteresis and counts real climbs", () => {
    // ±1.2 m of noise around a flat road, then a 50 m climb with the same noise on it.
    const noise = (i: number) => (i % 2 ? 1.2 : -1.2);
    const samples: { at: number; alt?: number; speed?: number }[] = [];
    for (let i = 0; i < 200; i++) samples.push({ at: i, alt: 100 + noise(i) });
    for (let i = 0; i < 100; i++) samples.push({ at: 200 + i, alt: 100 + i * 0.5 + noise(i) });
    const a = finishActivity({ sport: "ride", name: null, samples: build(samples), declared: {}, laps: [], ordinal: 1 });
    const naive = samples.slice(1).reduce((g, s, i) => g + Math.max(0, s.alt! - samples[i]!.alt!), 0);
    expect(naive).toBeGreaterThan(250);
    expect(a.totals.elevationGainM!).toBeGreaterThan(45);
    expect(a.totals.elevationGainM!).toBeLessThan(55);
  });

  it("elevation gain: the way up across a pause (a lift) is not climbed", () => {
    const b = new SampleBuilder(new SampleBudget());
    for (let i = 0; i <= 60; i++) b.push({ t: T0 + i, altitudeM: 1_000 + i / 2 });
    b.pause();
    for (let i = 0; i <= 60; i++) b.push({ t: T0 + 1_800 + i, altitudeM: 2_000 + i / 2 });
    const a = finishActivity({ sport: "hike", name: null, samples: b, declared: {}, laps: [], ordinal: 1 });
    expect(a.totals.elevationGainM).toBe(60);
  });

  it("a file's own totals that its samples and time contradict are not stored: the samples' are", () => {
    const minute = () => build(Array.from({ length: 61 }, (_, i) => ({ at: i, lat: 59.9, lng: 10.7 + i * 0.00005 })));
    const finish = (declared: Parameters<typeof finishActivity>[0]["declared"]) =>
      finishActivity({ sport: "run", name: null, samples: minute(), declared, laps: [], ordinal: 1 }).totals;
    // 999,999 m in a minute: the samples' 167 m.
    const far = finish({ elapsedTimeS: 60, distanceM: 999_999 });
    expect(far.distanceM).toBeGreaterThan(160);
    expect(far.distanceM).toBeLessThan(170);
    expect(far.averageSpeedMps).toBeCloseTo(far.distanceM! / 60, 6);
    // A minute of samples in a lap of 2,000,000 s (23 days): the samples' minute. Three hours past them is still the file's word.
    expect(finish({ elapsedTimeS: 2_000_000, movingTimeS: 2_000_000 })).toMatchObject({ elapsedTimeS: 60, movingTimeS: 60 });
    expect(finish({ elapsedTimeS: 3 * 3_600 + 60 }).elapsedTimeS).toBe(3 * 3_600 + 60);
    // A stated moving time of one second beside 10 km in an hour: the samples' moving time, not the distance, gives way.
    const hour = build(Array.from({ length: 3_601 }, (_, i) => ({ at: i, speed: 2.8 })));
    const t = finishActivity({ sport: "run", name: null, samples: hour, declared: { elapsedTimeS: 3_600, movingTimeS: 1, distanceM: 10_000 }, laps: [], ordinal: 1 }).totals;
    expect(t).toMatchObject({ distanceM: 10_000, movingTimeS: 3_600 });
  });

  it("keeps where the first sample falls after the start: from the start to the millisecond, 0 without a start of the file's own", () => {
    const samples = [{ at: 2.25 }, { at: 3.25 }, { at: 10 }];
    const declaredLap = { startS: T0 + 0.5, totals: { elapsedTimeS: 9.5 } };
    const a = finishActivity({ sport: "ride", startS: T0 + 0.5, name: null, samples: build(samples), declared: { elapsedTimeS: 9.5 }, laps: [declaredLap], ordinal: 1 });
    expect(a.startTime.getTime()).toBe((T0 + 0.5) * 1000);
    expect(a.firstSampleOffsetS).toBe(1.75);
    expect(a.streams.time_s).toEqual([0, 1, 7.75]);
    // The lap that began with the session, before the first sample, counts from that sample at 0 and keeps its length.
    expect(a.laps.map((l) => [l.startOffsetS, l.elapsedTimeS])).toEqual([[0, 9.5]]);
    expect(finishActivity({ sport: "ride", name: null, samples: build(samples), declared: {}, laps: [], ordinal: 1 }).firstSampleOffsetS).toBe(0);
  });

  it("moving time leaves out the stretches standing still", () => {
    const samples: { at: number; alt?: number; speed?: number }[] = [];
    for (let i = 0; i <= 100; i++) samples.push({ at: i, speed: i >= 40 && i < 70 ? 0 : 3 });
    const a = finishActivity({ sport: "run", name: null, samples: build(samples), declared: {}, laps: [], ordinal: 1 });
    expect(a.totals.elapsedTimeS).toBe(100);
    expect(a.totals.movingTimeS).toBe(70);
  });

  it("moving time: after a gap, the distance across it decides, not how the athlete set off again", () => {
    const moving = (samples: { at: number; distanceM?: number; speedMps?: number; cadenceRpm?: number; powerW?: number }[]) => {
      const b = new SampleBuilder(new SampleBudget());
      for (const { at, ...s } of samples) b.push({ t: T0 + at, ...s });
      return finishActivity({ sport: "run", name: null, samples: b, declared: {}, laps: [], ordinal: 1 }).totals.movingTimeS;
    };
    // 100 s at 3 m/s, a stop of 30 minutes in one place, then 100 s more: the stop's end shows
    // speed and cadence again, but the distance did not move across it.
    const before = Array.from({ length: 101 }, (_, i) => ({ at: i, distanceM: i * 3, speedMps: 3, cadenceRpm: 84 }));
    const after = Array.from({ length: 101 }, (_, i) => ({ at: 1_900 + i, distanceM: 300 + i * 3, speedMps: 3, cadenceRpm: 84 }));
    expect(moving([...before, ...after])).toBe(200);
    // The same gap with the way covered in it (a GPS that lost its fix in a tunnel) is moving.
    expect(moving([...before, ...after.map((s) => ({ ...s, distanceM: s.distanceM + 5_400 }))])).toBe(2_000);
    // Without a distance: power at the end of a 20 s gap still speaks for it; after 5 minutes it does not.
    const ride = (gap: number) => [
      ...Array.from({ length: 11 }, (_, i) => ({ at: i, powerW: 200 })),
      ...Array.from({ length: 11 }, (_, i) => ({ at: 10 + gap + i, powerW: 200 })),
    ];
    expect(moving(ride(20))).toBe(40);
    expect(moving(ride(300))).toBe(20);
    // Smart recording (a sample every 8 s) keeps counting on its samples' own readings.
    expect(moving(Array.from({ length: 11 }, (_, i) => ({ at: i * 8, speedMps: 3 })))).toBe(80);
  });

  it("a device's distance: a few readings out of reach are left out, a lasting jump or reset is not counted", () => {
    const run = (distance: (i: number) => number, n = 600) => {
      const b = new SampleBuilder(new SampleBudget());
      for (let i = 0; i <= n; i++) b.push({ t: T0 + i, distanceM: distance(i), speedMps: 3 });
      return finishActivity({ sport: "run", name: null, samples: b, declared: {}, laps: [], ordinal: 1 });
    };
    // One reading of 999 km: in the middle, at the end, at the start; and three in a row.
    for (const [what, bad] of [["middle", [300]], ["last", [600]], ["first", [0]], ["a run of three", [200, 201, 202]]] as const) {
      const a = run((i) => ((bad as readonly number[]).includes(i) ? 999_000 : i * 3));
      expect({ what, distance: a.totals.distanceM, speed: a.totals.averageSpeedMps }).toEqual({ what, distance: what === "last" || what === "first" ? 1_797 : 1_800, speed: expect.any(Number) });
      for (const i of bad) expect(a.streams.distance_m![i], `${what} ${i}`).toBeNull();
      expect(a.streams.distance_m!.filter((v) => v === null).length).toBe(bad.length);
    }
    // A counter that resets to 0 halfway (a device restarted), and one that jumps 50 km and goes
    // on from there: each stretch counts, the jump does not; the readings stay as recorded.
    expect(run((i) => (i < 300 ? i * 3 : (i - 300) * 3)).totals.distanceM).toBe(299 * 3 + 300 * 3);
    const jumped = run((i) => (i < 300 ? i * 3 : 50_000 + i * 3));
    expect(jumped.totals.distanceM).toBe(1_800 - 3);
    expect(jumped.streams.distance_m![400]).toBe(51_200);
    // A dropout longer than a fault's run (12 readings of 0, or 12 readings 500 m short), then
    // the distance again: the dropout is left out, and the way back up is not counted.
    for (const low of [0, 397]) {
      const dropout = run((i) => (i >= 300 && i < 312 ? low : i * 3));
      expect({ low, distance: dropout.totals.distanceM }).toEqual({ low, distance: 1_800 });
      expect(dropout.streams.distance_m!.slice(300, 312).every((v) => v === null)).toBe(true);
      expect(dropout.streams.distance_m![312]).toBe(936);
    }
    // A clean channel's total is exactly its last value less its first.
    expect(run((i) => 12.34 + i * 2.71).totals.distanceM).toBe(12.34 + 600 * 2.71 - 12.34);
  });

  it("positions: out of range and exact zeros are no fix", () => {
    expect(cleanPosition(91, 8)).toBeNull();
    expect(cleanPosition(47, -181)).toBeNull();
    expect(cleanPosition(0, 0)).toBeNull();
    expect(cleanPosition(Number.NaN, 8)).toBeNull();
    expect(cleanPosition(47.1, 8.2)).toEqual([47.1, 8.2]);
    // One degree of latitude is about 111.2 km.
    expect(haversine([47, 8], [48, 8])).toBeCloseTo(111_195, -1);
  });

  it("timestamps before the FIT epoch or far in the future are dropped", () => {
    const b = new SampleBuilder(new SampleBudget());
    b.push({ t: Date.UTC(1980, 0, 1) / 1000 });
    b.push({ t: T0 });
    b.push({ t: Date.UTC(2085, 0, 1) / 1000 });
    expect(b.size).toBe(1);
    expect(b.dropped).toBe(2);
  });

  it("a sample stamped far ahead (a clock glitch) is dropped, not every sample after it", () => {
    const at = Array.from({ length: 100 }, (_, i) => i);
    const glitch = build([...at.slice(0, 3), 5 * 86_400, ...at.slice(3)].map((x) => ({ at: x })));
    expect(glitch.t.map((t) => t - T0)).toEqual(at);
    expect(glitch.dropped).toBe(1);
    // A few in a row, and a pause before them, which stays with the sample that carries on.
    const run = new SampleBuilder(new SampleBudget());
    for (const x of [0, 1, 2]) run.push({ t: T0 + x, heartRateBpm: 120 });
    run.pause();
    for (const x of [7_200, 7_201, 7_202]) run.push({ t: T0 + x, heartRateBpm: 200 });
    for (const x of [10, 11]) run.push({ t: T0 + x, heartRateBpm: 130 });
    expect(run.t.map((t) => t - T0)).toEqual([0, 1, 2, 10, 11]);
    expect(run.ch.heart_rate_hz).toEqual([2, 2, 2, 130 / 60, 130 / 60]);
    expect([...run.breaks]).toEqual([3]);
    expect(run.dropped).toBe(3);
    const a = finishActivity({ sport: "run", name: null, samples: glitch, declared: {}, laps: [], ordinal: 1 });
    expect(a.totals.elapsedTimeS).toBe(99);
  });

  it("many pauses, each before a sample days ahead: dropping each costs what it drops, not every pause kept", () => {
    // A GPX file of 40,000 segments, each a point and one 100,000 s later (a 2 MB file, 105 KB
    // gzipped): each later point is dropped when the next segment's first comes. Rebuilding the
    // set of pauses for each drop took over a minute for half as many (the file worker's limit);
    // this test's own time limit (30 s) is what fails it on such code.
    const b = new SampleBuilder(new SampleBudget());
    const segments = 40_000;
    for (let k = 0; k < segments; k++) {
      b.pause();
      b.push({ t: T0 + 2 * k });
      b.push({ t: T0 + 2 * k + 100_000 });
    }
    // The last segment's later point stays: nothing comes after it to show it up.
    expect(b.size).toBe(segments + 1);
    expect(b.dropped).toBe(segments - 1);
    expect(b.breaks.size).toBe(segments - 1);
    expect(b.breaks.has(1) && b.breaks.has(segments - 1) && !b.breaks.has(segments)).toBe(true);
  });

  it("a builder whose every sample was refused for its time makes no activity: a FileError naming the dates", () => {
    const b = new SampleBuilder(new SampleBudget());
    for (let i = 0; i < 10; i++) b.push({ t: Date.UTC(2085, 0, 1) / 1000 + i * 60 });
    expect(b.size).toBe(0);
    const e = (() => {
      try {
        finishActivity({ sport: "run", name: null, samples: b, declared: {}, laps: [], ordinal: 1 });
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(FileError);
    expect((e as FileError).code).toBe("invalid_file");
    expect((e as FileError).message).toBe(
      "Every sample in the file is dated from 2085-01-01 00:00 UTC to 2085-01-01 00:09 UTC, in the future: the recording device's clock was wrong, so the activity cannot be placed in time.",
    );
    // A year past 9999 is written as it is, not cut from ISO's `+010000-01-01T…`.
    const far = new SampleBuilder(new SampleBudget());
    for (const t of [Date.UTC(9999, 11, 31, 23, 59) / 1000, Date.UTC(10000, 0, 1) / 1000]) far.push({ t });
    expect(() => finishActivity({ sport: "run", name: null, samples: far, declared: {}, laps: [], ordinal: 1 })).toThrow("dated from 9999-12-31 23:59 UTC to 10000-01-01 00:00 UTC");
    // Without any sample at all, the file holds no activity.
    expect(() => finishActivity({ sport: "run", name: null, samples: new SampleBuilder(new SampleBudget()), declared: {}, laps: [], ordinal: 1 })).toThrow(
      expect.objectContaining({ code: "no_activity_data" }),
    );
  });

  it("a glitch at either end that would make the activity last over 30 days is dropped, not the file", () => {
    const hour = Array.from({ length: 3_601 }, (_, i) => ({ at: i, speed: 3 }));
    const finish = (b: SampleBuilder) => finishActivity({ sport: "run", name: null, samples: b, declared: {}, laps: [], ordinal: 1 });
    // The last sample 300 days late.
    const late = build([...hour, { at: 300 * 86_400, speed: 3 }]);
    const a = finish(late);
    expect(a.totals.elapsedTimeS).toBe(3_600);
    expect(a.streams.size).toBe(3_601);
    expect(late.dropped).toBe(1);
    // The first two a year early, a pause among them.
    const early = new SampleBuilder(new SampleBudget());
    early.push({ t: T0 - 365 * 86_400, speedMps: 3 });
    early.pause();
    early.push({ t: T0 - 365 * 86_400 + 1, speedMps: 3 });
    for (const s of hour) {
      if (s.at === 1_800) early.pause();
      early.push({ t: T0 + s.at, speedMps: 3 });
    }
    const b = finish(early);
    expect(b.totals.elapsedTimeS).toBe(3_600);
    expect(b.streams.time_s[0]).toBe(0);
    expect(b.streams.size).toBe(3_601);
    expect([...early.breaks]).toEqual([1_800]);
    expect(early.dropped).toBe(2);
    // One at each end.
    const both = build([{ at: -400 * 86_400 }, ...hour, { at: 300 * 86_400 }]);
    expect(finish(both).totals.elapsedTimeS).toBe(3_600);
    expect(both.dropped).toBe(2);
    // A lap the file began at the early stray begins with what is left, and so does the start it declared.
    const lapped = build([{ at: -365 * 86_400, speed: 3 }, ...hour]);
    const withLap = finishActivity({
      sport: "run",
      name: null,
      startS: T0 - 365 * 86_400,
      samples: lapped,
      declared: {},
      laps: [{ startS: T0 - 365 * 86_400, totals: { distanceM: 10_800 } }],
      ordinal: 1,
    });
    expect(withLap.startTime.getTime()).toBe(T0 * 1000);
    expect(withLap.laps).toHaveLength(1);
    expect(withLap.laps[0]).toMatchObject({ startOffsetS: 0, elapsedTimeS: 3_600 });
    // Two points 31 days apart: neither outnumbers the other, so neither is taken for a stray.
    expect(() => finish(build([{ at: 0 }, { at: 31 * 86_400 }]))).toThrow("lasts 31 days");
    // Two recordings 40 days apart, each more than a few samples: not a glitch, and the file fails as before.
    const apart = build([...hour, ...Array.from({ length: 20 }, (_, i) => ({ at: 40 * 86_400 + i }))]);
    expect(() => finish(apart)).toThrow("The activity lasts 40 days; an activity can last at most 30.");
    // Within 30 days, a sample 20 days on is the activity's own (a watch left running), and stays.
    const within = build([...hour, { at: 20 * 86_400 }]);
    expect(finish(within).totals.elapsedTimeS).toBe(20 * 86_400);
  });

  it("a late sample, or a second recording spliced on, is what is dropped when nothing jumped ahead", () => {
    const late = build([...Array.from({ length: 101 }, (_, i) => ({ at: i })), { at: 95 }]);
    expect(late.size).toBe(101);
    expect(late.dropped).toBe(1);
    // Two recordings, the second starting before the first ended: the overlap is dropped.
    const spliced = build([...Array.from({ length: 101 }, (_, i) => ({ at: i })), ...Array.from({ length: 101 }, (_, i) => ({ at: 50 + i }))]);
    expect(spliced.t.map((t) => t - T0)).toEqual(Array.from({ length: 151 }, (_, i) => i));
    // A long pause, then a sample from before it but among more than the last few: dropped.
    const paused = build([...Array.from({ length: 10 }, (_, i) => ({ at: i })), ...Array.from({ length: 20 }, (_, i) => ({ at: 3_600 + i })), { at: 20 }]);
    expect(paused.size).toBe(30);
    expect(paused.dropped).toBe(1);
  });

  it("the sample cap is per file, across its activities", () => {
    const budget = new SampleBudget();
    budget.used = LIMITS.samplesPerFile - 1;
    const a = new SampleBuilder(budget);
    a.push({ t: T0 });
    const b = new SampleBuilder(budget);
    expect(() => b.push({ t: T0 })).toThrow(FileError);
  });

  it("a lap declared past the next lap's start is cut there, and an average speed it did not state is over the time it keeps", () => {
    const run = build(Array.from({ length: 601 }, (_, i) => ({ at: i, speed: 3 })));
    const a = finishActivity({
      sport: "run",
      name: null,
      startS: T0,
      samples: run,
      declared: { elapsedTimeS: 600 },
      laps: [
        { startS: T0, totals: { elapsedTimeS: 300, distanceM: 900 } },
        // Declares 3,000 s, though the activity ends 300 s after it starts.
        { startS: T0 + 300, totals: { elapsedTimeS: 3_000, movingTimeS: 3_000, distanceM: 900 } },
        // States its own average: kept as the file says it.
        { startS: T0 + 450, totals: { elapsedTimeS: 3_000, distanceM: 450, averageSpeedMps: 2.5 } },
      ],
      ordinal: 1,
    });
    expect(a.laps.map((l) => [l.elapsedTimeS, l.movingTimeS, l.distanceM, l.averageSpeedMps])).toEqual([
      [300, 300, 900, 3],
      [150, 150, 900, 6],
      [150, 150, 450, 2.5],
    ]);
  });

  it("names: control characters and runs of space collapse, at most 200 characters", () => {
    expect(cleanName("  Morning\u0000 run\n\t ")).toBe("Morning run");
    expect(cleanName("   ")).toBeNull();
    // Marks that combine with nothing, alone or after what is taken out: no name at all, never "".
    for (const none of [" \u0301", "\u200B\u0301", "\u0301\u0301"]) expect(cleanName(none), JSON.stringify(none)).toBeNull();
    // Cut to what ActivityName takes (200 characters, as code points), between characters: never half an emoji.
    expect(cleanName("🏃".repeat(300))).toBe("🏃".repeat(200));
    expect(cleanName(`${"a".repeat(199)}🏃🏃`)).toBe(`${"a".repeat(199)}🏃`);
    expect(cleanName(`${"a".repeat(199)} 🏃`)).toBe("a".repeat(199));
    expect(cleanName(`${"a".repeat(197)}👩‍💻`)).toBe(`${"a".repeat(197)}👩‍💻`);
    expect(cleanName(`${"a".repeat(198)}👩‍💻`)).toBe(`${"a".repeat(198)}👩`);
    for (const long of ["🏃".repeat(300), `${"a".repeat(199)}🏃`, "ø".repeat(250), `${"a".repeat(198)}👩‍💻`]) expect(ActivityName.safeParse(cleanName(long)).success).toBe(true);
    expect(ActivityName.safeParse("🏃".repeat(201)).success).toBe(false);
    // Hidden characters go, as an upload's file name's do; a ZWJ inside an emoji stays.
    expect(cleanName("ride\u202etif.exe \u200bLøp 🏃\u200d♀️")).toBe("ridetif.exe Løp 🏃\u200d♀️");
  });

  it("a declared total outside the limits is replaced by the samples' own", () => {
    const samples: { at: number; alt?: number; speed?: number }[] = [];
    for (let i = 0; i <= 10; i++) samples.push({ at: i, speed: 3 });
    const a = finishActivity({
      sport: "run",
      name: null,
      samples: build(samples),
      declared: { maxSpeedMps: 250, averageHeartRateHz: 9, energyJ: -5 },
      laps: [],
      ordinal: 1,
    });
    expect(a.totals.maxSpeedMps).toBe(3);
    expect(a.totals.averageHeartRateHz).toBeNull();
    expect(a.totals.energyJ).toBeNull();
  });

  it("declared totals that contradict each other (a maximum below its average) give way to the samples' pair, else the maximum is left out", () => {
    const samples: { at: number; speed?: number; bpm?: number }[] = [];
    for (let i = 0; i <= 10; i++) samples.push({ at: i, speed: 2 + (i % 2), bpm: 120 + i });
    const finish = (declared: Parameters<typeof finishActivity>[0]["declared"], b = build(samples)) =>
      finishActivity({ sport: "run", name: null, samples: b, declared, laps: [], ordinal: 1 }).totals;
    // Heart rate 250 average, 10 maximum: the samples' 125 and 130 bpm.
    const hr = finish({ averageHeartRateHz: 250 / 60, maxHeartRateHz: 10 / 60 });
    expect([hr.averageHeartRateHz! * 60, hr.maxHeartRateHz! * 60]).toEqual([expect.closeTo(125, 6), expect.closeTo(130, 6)]);
    // A stated average speed above the stated maximum: distance over time and the samples' maximum,
    // with a distance; without one (and the samples' maximum below the average too), the average alone.
    const speed = finish({ averageSpeedMps: 2.5, maxSpeedMps: 2, distanceM: 25 });
    expect([speed.averageSpeedMps, speed.maxSpeedMps]).toEqual([2.5, 3]);
    const noDistance = finish({ averageSpeedMps: 5, maxSpeedMps: 4 });
    expect([noDistance.averageSpeedMps, noDistance.maxSpeedMps]).toEqual([5, null]);
    // No samples of the channel to fall back on: the average stays, the maximum goes.
    const bare: { at: number }[] = [];
    for (let i = 0; i <= 10; i++) bare.push({ at: i });
    const alone = finish({ averageHeartRateHz: 3, maxHeartRateHz: 2 }, build(bare));
    expect([alone.averageHeartRateHz, alone.maxHeartRateHz]).toEqual([3, null]);
    // In order, the file's own are kept.
    const kept = finish({ averageHeartRateHz: 2, maxHeartRateHz: 3 });
    expect([kept.averageHeartRateHz, kept.maxHeartRateHz]).toEqual([2, 3]);
  });
});
