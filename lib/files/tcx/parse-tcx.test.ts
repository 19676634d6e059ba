import { describe, expect, it } from "vitest";
import { parseActivityFile } from "../parse";
import { sample, utf8 } from "../testing/samples";
import { FileError, type ParsedActivity } from "../types";

const tcx = (activities: string, prefix = "") =>
  utf8(
    `<?xml version="1.0"?><${prefix}TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2"><${prefix}Activities>${activities}</${prefix}Activities></${prefix}TrainingCenterDatabase>`,
  );

const tp = (time: string, extra = "") =>
  `<Trackpoint><Time>${time}</Time><Position><LatitudeDegrees>47.1</LatitudeDegrees><LongitudeDegrees>8.1</LongitudeDegrees></Position>${extra}</Trackpoint>`;

const lap = (start: string, seconds: number, distance: number, points: string, extra = "") =>
  `<Lap StartTime="${start}"><TotalTimeSeconds>${seconds}</TotalTimeSeconds><DistanceMeters>${distance}</DistanceMeters>${extra}<Track>${points}</Track></Lap>`;

function parse(bytes: Uint8Array): ParsedActivity[] {
  return parseActivityFile(bytes, "tcx");
}

describe("TCX", () => {
  it("trackpoints whose times cannot be read: the file fails naming such a time", () => {
    const file = tcx(`<Activity Sport="Running"><Id>x</Id>${lap("x", 60, 100, tp("Mon May 17 08:00:00 2026") + tp("Mon May 17 08:01:00 2026"))}</Activity>`);
    expect(() => parse(file)).toThrow(`times cannot be read (such as "Mon May 17 08:00:00 2026")`);
  });

  it("reads laps whose Calories are all 0 (the schema requires the element) as no energy recorded: null, not 0", () => {
    const zero = "<Calories>0</Calories>";
    const [a] = parse(
      tcx(
        `<Activity Sport="Biking"><Id>2024-01-01T10:00:00Z</Id>` +
          lap("2024-01-01T10:00:00Z", 100, 300, tp("2024-01-01T10:00:00Z") + tp("2024-01-01T10:01:40Z"), zero) +
          lap("2024-01-01T10:02:00Z", 300, 1200, tp("2024-01-01T10:02:00Z") + tp("2024-01-01T10:07:00Z"), zero) +
          `</Activity>`,
      ),
    );
    expect(a!.totals.energyJ).toBeNull();
  });

  it("a last trackpoint stamped 300 days late is dropped rather than failing the file", () => {
    const points = Array.from({ length: 61 }, (_, i) => tp(new Date(Date.UTC(2024, 0, 1, 10, 0, i * 10)).toISOString())).join("");
    const [a] = parse(
      tcx(`<Activity Sport="Running"><Id>2024-01-01T10:00:00Z</Id>` + lap("2024-01-01T10:00:00Z", 600, 1800, points + tp("2024-10-27T10:10:00Z")) + `</Activity>`),
    );
    expect(a!.totals.elapsedTimeS).toBe(600);
    expect(a!.streams.size).toBe(61);
    expect(a!.laps).toHaveLength(1);
  });

  it("laps give the totals: moving time is the sum of TotalTimeSeconds, heart rate weighted by lap time", () => {
    const [a] = parse(
      tcx(
        `<Activity Sport="Running"><Id>2024-01-01T10:00:00Z</Id><Notes>Intervals</Notes>` +
          lap("2024-01-01T10:00:00Z", 100, 300, tp("2024-01-01T10:00:00Z") + tp("2024-01-01T10:01:40Z"), "<AverageHeartRateBpm><Value>120</Value></AverageHeartRateBpm><MaximumHeartRateBpm><Value>130</Value></MaximumHeartRateBpm><Calories>10</Calories>") +
          lap("2024-01-01T10:02:00Z", 300, 1200, tp("2024-01-01T10:02:00Z") + tp("2024-01-01T10:07:00Z"), "<AverageHeartRateBpm><Value>160</Value></AverageHeartRateBpm><MaximumHeartRateBpm><Value>175</Value></MaximumHeartRateBpm><Calories>40</Calories>") +
          `</Activity>`,
      ),
    );
    expect(a!.sport).toBe("run");
    expect(a!.name).toBe("Intervals");
    expect(a!.totals.elapsedTimeS).toBe(420);
    expect(a!.totals.movingTimeS).toBe(400);
    expect(a!.totals.distanceM).toBe(1500);
    expect(a!.totals.averageHeartRateHz).toBeCloseTo((120 * 100 + 160 * 300) / 400 / 60, 9);
    expect(a!.totals.maxHeartRateHz).toBeCloseTo(175 / 60, 9);
    expect(a!.totals.energyJ).toBe(50 * 4184);
    // A lap's elapsed time runs to the next lap's start: the first lap's 100 s of timer time
    // plus 20 s paused.
    expect(a!.laps.map((l) => [l.startOffsetS, l.elapsedTimeS, l.movingTimeS, l.distanceM])).toEqual([
      [0, 120, 100, 300],
      [120, 300, 300, 1200],
    ]);
  });

  it("a lap whose StartTime is after the activity's end (2099 beside trackpoints of 2024) is none of its laps", () => {
    const [a] = parse(
      tcx(
        `<Activity Sport="Running"><Id>2024-01-01T10:00:00Z</Id>` +
          lap("2024-01-01T10:00:00Z", 100, 300, tp("2024-01-01T10:00:00Z") + tp("2024-01-01T10:01:40Z")) +
          lap("2099-01-01T00:00:00Z", 60, 66, tp("2024-01-01T10:02:00Z") + tp("2024-01-01T10:03:00Z")) +
          `</Activity>`,
      ),
    );
    expect(a!.totals.elapsedTimeS).toBe(180);
    expect(a!.laps.map((l) => [l.startOffsetS, l.elapsedTimeS])).toEqual([[0, 180]]);
    const [alone] = parse(tcx(`<Activity Sport="Running"><Id>2024-01-01T10:00:00Z</Id>` + lap("2099-01-01T00:00:00Z", 60, 66, tp("2024-01-01T10:00:00Z") + tp("2024-01-01T10:00:59Z")) + `</Activity>`));
    expect(alone!.laps.map((l) => [l.startOffsetS, l.elapsedTimeS])).toEqual([[0, 59]]);
  });

  it("trackpoint extensions under any prefix: TPX Speed, Watts, RunCadence", () => {
    const ext = (p: string) => `<Extensions><${p}TPX><${p}Speed>3.5</${p}Speed><${p}Watts>210</${p}Watts><${p}RunCadence>88</${p}RunCadence></${p}TPX></Extensions>`;
    const [a] = parse(
      tcx(`<Activity Sport="Biking">${lap("2024-01-01T10:00:00Z", 2, 7, tp("2024-01-01T10:00:00Z", ext("ns3:")) + tp("2024-01-01T10:00:01Z", ext("")))}</Activity>`),
    );
    expect(a!.sport).toBe("ride");
    expect(a!.streams.speed_mps).toEqual([3.5, 3.5]);
    expect(a!.streams.power_w).toEqual([210, 210]);
    expect(a!.streams.cadence_hz).toEqual([88 / 60, 88 / 60]);
  });

  it("cadence is the first of <Cadence> and RunCadence that is in range: a bad <Cadence> does not hide a good RunCadence", () => {
    const point = (time: string, cadence: string, run: string) => tp(time, `<Cadence>${cadence}</Cadence><Extensions><ns3:TPX><ns3:RunCadence>${run}</ns3:RunCadence></ns3:TPX></Extensions>`);
    const [a] = parse(
      tcx(
        `<Activity Sport="Running">${lap(
          "2024-01-01T10:00:00Z",
          3,
          10,
          point("2024-01-01T10:00:00Z", "400", "88") +
            point("2024-01-01T10:00:01Z", "-5", "86") +
            point("2024-01-01T10:00:02Z", "90", "80") +
            // 255: the byte's "no value" (TCX's cadence stops at 254), not a cadence.
            point("2024-01-01T10:00:03Z", "255", "255"),
        )}</Activity>`,
      ),
    );
    expect(a!.streams.cadence_hz).toEqual([88 / 60, 86 / 60, 90 / 60, null]);
  });

  it("a multisport session gives one activity per sport, in order", () => {
    const act = (sport: string, t: string) => `<Activity Sport="${sport}">${lap(t, 60, 100, tp(t))}</Activity>`;
    const acts = parse(
      tcx(
        `<MultiSportSession><Id>2024-01-01T10:00:00Z</Id><FirstSport>${act("Biking", "2024-01-01T10:00:00Z")}</FirstSport><NextSport>${act("Running", "2024-01-01T11:00:00Z")}</NextSport></MultiSportSession>`,
      ),
    );
    expect(acts.map((a) => a.sport)).toEqual(["ride", "run"]);
  });

  it("an activity without timed trackpoints is no_activity_data; Other is other", () => {
    const e = (() => {
      try {
        parse(tcx(`<Activity Sport="Other"><Lap StartTime="2024-01-01T10:00:00Z"><TotalTimeSeconds>60</TotalTimeSeconds></Lap></Activity>`));
      } catch (err) {
        return err as FileError;
      }
    })();
    expect(e).toBeInstanceOf(FileError);
    expect(e!.code).toBe("no_activity_data");
    const [a] = parse(tcx(`<Activity Sport="Other">${lap("2024-01-01T10:00:00Z", 1, 0, tp("2024-01-01T10:00:00Z"))}</Activity>`));
    expect(a!.sport).toBe("other");
  });

  it("laps that share a start are one lap, the one that holds the time and distance, in the laps and in the totals", () => {
    const points = tp("2024-01-01T10:00:00Z") + tp("2024-01-01T10:05:00Z");
    const [a] = parse(
      tcx(
        `<Activity Sport="Running">` +
          lap("2024-01-01T10:00:00Z", 0.4, 0, "") +
          lap("2024-01-01T10:00:00Z", 300, 900, points) +
          lap("2024-01-01T10:05:00Z", 300, 900, tp("2024-01-01T10:05:01Z") + tp("2024-01-01T10:10:00Z")) +
          `</Activity>`,
      ),
    );
    expect(a!.laps.map((l) => [l.startOffsetS, l.elapsedTimeS, l.movingTimeS, l.distanceM])).toEqual([
      [0, 300, 300, 900],
      [300, 300, 300, 900],
    ]);
    expect(a!.totals.distanceM).toBe(1800);
    expect(a!.totals.movingTimeS).toBe(600);
  });

  it("trackpoints whose every time is from 1970 (a clock never set) are invalid_file naming those dates", () => {
    const points = Array.from({ length: 61 }, (_, i) => tp(new Date(i * 1000).toISOString()));
    const e = (() => {
      try {
        parse(tcx(`<Activity Sport="Running">${lap("1970-01-01T00:00:00Z", 60, 100, points.join(""))}</Activity>`));
      } catch (err) {
        return err as FileError;
      }
    })();
    expect(e).toBeInstanceOf(FileError);
    expect(e!.code).toBe("invalid_file");
    expect(e!.message).toContain("dated from 1970-01-01 00:00 UTC to 1970-01-01 00:01 UTC, before 1990: the recording device's clock was not set");
  });

  it("a time that names no real date or time is no time: such a trackpoint is skipped, and year 0001 is named as written", () => {
    const points = [tp("2025-02-28T17:00:00Z"), tp("2025-02-30T17:00:00Z"), tp("2025-02-28T24:04:59Z"), tp("2025-02-28T17:00:10Z")];
    const [a] = parse(tcx(`<Activity Sport="Running">${lap("2025-02-28T17:00:00Z", 10, 100, points.join(""))}</Activity>`));
    expect(a!.streams.time_s).toEqual([0, 10]);
    expect(a!.totals.elapsedTimeS).toBe(10);
    const old = Array.from({ length: 2 }, (_, i) => tp(`0001-01-01T17:00:0${i}Z`));
    let e: unknown;
    try {
      parse(tcx(`<Activity Sport="Running">${lap("0001-01-01T17:00:00Z", 1, 0, old.join(""))}</Activity>`));
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(FileError);
    expect((e as FileError).message).toContain("dated 0001-01-01 17:00 UTC, before 1990");
  });

  it("a lap's DistanceMeters of 0 with no point carrying a distance or a position is not recorded: null", () => {
    const bare = (t: string) => `<Trackpoint><Time>${t}</Time><HeartRateBpm><Value>120</Value></HeartRateBpm></Trackpoint>`;
    const indoor = (points: string) => `<Activity Sport="Biking">${lap("2024-01-01T10:00:00Z", 60, 0, points)}</Activity>`;
    const [a] = parse(tcx(indoor(bare("2024-01-01T10:00:00Z") + bare("2024-01-01T10:01:00Z"))));
    expect(a!.totals.distanceM).toBeNull();
    expect(a!.laps[0]!.distanceM).toBeNull();
    // A point that does carry one makes the 0 a measurement: standing still on the trainer.
    const [b] = parse(tcx(indoor(bare("2024-01-01T10:00:00Z") + tp("2024-01-01T10:01:00Z", "<DistanceMeters>0</DistanceMeters>"))));
    expect(b!.totals.distanceM).toBe(0);
    expect(b!.laps[0]!.distanceM).toBe(0);
  });

  it("a treadmill lap's maximum speed, average speed and watts of 0, with no sample recording them, are not recorded: null", () => {
    const bare = (t: string) => `<Trackpoint><Time>${t}</Time><HeartRateBpm><Value>120</Value></HeartRateBpm></Trackpoint>`;
    const zeros = "<MaximumSpeed>0</MaximumSpeed><Extensions><ns3:LX><ns3:AvgSpeed>0</ns3:AvgSpeed><ns3:AvgWatts>0</ns3:AvgWatts></ns3:LX></Extensions>";
    const [a] = parse(tcx(`<Activity Sport="Running">${lap("2024-01-01T10:00:00Z", 60, 0, bare("2024-01-01T10:00:00Z") + bare("2024-01-01T10:01:00Z"), zeros)}</Activity>`));
    expect(a!.totals.maxSpeedMps).toBeNull();
    expect(a!.totals.averagePowerW).toBeNull();
    expect(a!.laps[0]).toMatchObject({ averageSpeedMps: null, maxSpeedMps: null, averagePowerW: null });
    // Heart rate was recorded: its totals stand.
    expect(a!.totals.averageHeartRateHz).toBeCloseTo(2, 9);
  });

  it("the laps' average watts give the activity's, weighted by lap time, as their heart rates do", () => {
    const watts = (w: number) => `<Extensions><ns3:LX><ns3:AvgWatts>${w}</ns3:AvgWatts></ns3:LX></Extensions>`;
    const power = (t: string, w: number) => tp(t, `<Extensions><ns3:TPX><ns3:Watts>${w}</ns3:Watts></ns3:TPX></Extensions>`);
    const [a] = parse(
      tcx(
        `<Activity Sport="Biking">` +
          lap("2024-01-01T10:00:00Z", 600, 5000, power("2024-01-01T10:00:00Z", 100) + power("2024-01-01T10:10:00Z", 100), watts(200)) +
          lap("2024-01-01T10:10:00Z", 1200, 10000, power("2024-01-01T10:10:01Z", 100) + power("2024-01-01T10:30:00Z", 100), watts(140)) +
          `</Activity>`,
      ),
    );
    // The device's own averages (its samples here are sparse): (200 × 600 + 140 × 1,200) / 1,800.
    expect(a!.totals.averagePowerW).toBeCloseTo(160, 9);
    expect(a!.laps.map((l) => l.averagePowerW)).toEqual([200, 140]);
  });

  it("the laps' average speeds give the activity's (their distance over the time they say it took), not the distance over TotalTimeSeconds", () => {
    const speed = (v: number) => `<Extensions><ns3:LX><ns3:AvgSpeed>${v}</ns3:AvgSpeed></ns3:LX></Extensions>`;
    const laps = (second: string) =>
      `<Activity Sport="Biking">` +
      // A ride stopped for most of its first lap's timer time (garmin_connect.tcx: 1.69 km in 1:12:32, at 5.427 m/s).
      lap("2024-01-01T10:00:00Z", 3600, 1800, tp("2024-01-01T10:00:00Z") + tp("2024-01-01T11:00:00Z"), speed(6)) +
      lap("2024-01-01T11:00:00Z", 1200, 9000, tp("2024-01-01T11:00:01Z") + tp("2024-01-01T11:20:00Z"), second) +
      `</Activity>`;
    const [a] = parse(tcx(laps(speed(7.5))));
    // 10,800 m over 1,800 / 6 + 9,000 / 7.5 = 1,500 s; the timer's 4,800 s would say 2.25 m/s.
    expect(a!.totals.movingTimeS).toBe(4800);
    expect(a!.totals.averageSpeedMps).toBeCloseTo(7.2, 9);
    expect(a!.laps.map((l) => l.averageSpeedMps)).toEqual([6, 7.5]);
    // A lap that covered distance without stating its average: derived from distance over time, as before.
    const [b] = parse(tcx(laps("")));
    expect(b!.totals.averageSpeedMps).toBeCloseTo(10800 / 4800, 3);
  });

  it("a cut TCX is invalid_file", () => {
    const bytes = sample("tcx", "garmin_connect.tcx");
    try {
      parse(bytes.subarray(0, bytes.length - 100));
      throw new Error("parsed");
    } catch (e) {
      expect(e).toBeInstanceOf(FileError);
      expect((e as FileError).code).toBe("invalid_file");
    }
  });

  it("refuses more laps than the limit as it reads them, not after reading the whole file", () => {
    // 10,001 laps, each its own start, then a part that is not XML: a reader that counted laps
    // only at the end (and matched every lap's start against every other's first) would reach
    // it and fail there instead.
    const start = Date.parse("2024-01-01T10:00:00Z");
    const laps = Array.from({ length: 10_001 }, (_, i) => `<Lap StartTime="${new Date(start + i * 1000).toISOString()}"><TotalTimeSeconds>1</TotalTimeSeconds><DistanceMeters>1</DistanceMeters></Lap>`);
    const bytes = tcx(`<Activity Sport="Running"><Id>x</Id>${lap("2024-01-01T10:00:00Z", 1, 1, tp("2024-01-01T10:00:00Z"))}${laps.join("")}<<not xml</Activity>`);
    expect(() => parse(bytes)).toThrow(/declares more than 10,000 laps; at most 10,000 are read from one file/);
    // The limit is the file's, as a FIT file's: two activities of 5,001 laps are refused too.
    const half = (from: number) => `<Activity Sport="Running"><Id>x</Id>${laps.slice(from, from + 5_001).join("")}</Activity>`;
    expect(() => parse(tcx(`${half(0)}${half(5_000)}`))).toThrow(/declares more than 10,000 laps/);
    // At the limit the file is read, each lap running to the next one's start.
    const [a] = parse(tcx(`<Activity Sport="Running"><Id>x</Id>${lap("2024-01-01T09:59:59Z", 1, 1, tp("2024-01-01T09:59:59Z"))}${laps.slice(0, 9_999).join("")}</Activity>`));
    expect(a!.laps).toHaveLength(10_000);
    expect(a!.laps.slice(0, -1).every((l) => l.elapsedTimeS === 1)).toBe(true);
  });

  it("what follows the root element (NUL padding, junk) is not read: the same activities", () => {
    const file = sample("tcx", "garmin_connect.tcx");
    const expected = parse(file);
    expect(parse(new Uint8Array([...file, ...new Uint8Array(4096)]))).toEqual(expected);
    expect(parse(new Uint8Array([...file, ...utf8("\u0000junk</Activity>")]))).toEqual(expected);
  });

  it("times with an offset are read as the instant they name (bad.tcx: +01:00)", () => {
    const [a] = parse(sample("tcx", "bad.tcx"));
    expect(a!.startTime.toISOString()).toBe("2020-12-27T14:59:36.000Z");
  });
});
