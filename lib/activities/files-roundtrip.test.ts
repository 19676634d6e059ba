import { SAMPLES_DIR } from "../files/testing/samples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { Decoder, Stream } from "@garmin/fitsdk";
import { eq } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { expectWireShape } from "../testing/wire-shape";
import { uploadFiles } from "../db/schema";
import { STREAM_KEYS } from "../files/types";
import { Upload } from "../uploads/schemas";
import { startUploadProcessor, type UploadProcessor } from "../uploads/local-processor";
import { Activity } from "./schemas";
import { ActivityStreams, LapList } from "./file-schemas";
import { rideWithLegFasterThanItsMaximum } from "../files/testing/fit-files";

// Every sample file that holds an activity, uploaded for real, then read back: its streams at
// each resolution, its laps, its original byte for byte, and FIT, GPX and TCX exports that,
// uploaded again by another athlete, give back the same activity (CONTRACT §11).

const api = setupApi();
const SAMPLES = SAMPLES_DIR;
const TZ = "Europe/Oslo";

let processor: UploadProcessor;
beforeAll(() => {
  processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
});
afterAll(async () => {
  await processor.stop();
});

type UploadWire = ReturnType<typeof Upload.parse>;
type StreamsWire = ReturnType<typeof ActivityStreams.parse>;

async function upload(token: string, bytes: Uint8Array, fileName: string, fields: Record<string, string> = {}): Promise<UploadWire> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)]), fileName);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const res = await fetch(`${api.url}/v1/athletes/me/uploads`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
  await expectWireShape("POST", "/v1/athletes/me/uploads", res);
  expect(res.status, await res.clone().text()).toBe(202);
  const sent = Upload.parse(await res.json());
  for (let i = 0; i < 100; i++) {
    await processor.idle();
    const u = Upload.parse(await (await api.call(token, "GET", `/v1/uploads/${sent.id}`)).json());
    if (u.status !== "processing") return u;
  }
  throw new Error(`upload ${sent.id} still processing`);
}

async function ok(token: string, p: string): Promise<Response> {
  const res = await api.call(token, "GET", p);
  expect(res.status, `${p}: ${await res.clone().text()}`).toBe(200);
  return res;
}

const streamsOf = async (token: string, id: string, resolution = "full") =>
  ActivityStreams.parse(await (await ok(token, `/v1/activities/${id}/streams?resolution=${resolution}`)).json());
const activityOf = async (token: string, id: string) => Activity.parse(await (await ok(token, `/v1/activities/${id}`)).json());

function expectWellFormed(s: StreamsWire) {
  expect(s.size).toBeGreaterThan(0);
  for (const [key, values] of Object.entries(s.streams)) expect(values, key).toHaveLength(s.size);
  const t = s.streams.time_s!;
  expect(t[0]).toBe(0);
  expect(t.every((v, i) => i === 0 || v >= t[i - 1]!)).toBe(true);
}

const close = (a: number | null | undefined, b: number | null | undefined, tolerance: number) =>
  a == null || b == null ? a === b : Math.abs(a - b) <= tolerance;

/*
 * Where a generated file cannot give back what CONTRACT §11 asks, because its format cannot hold
 * it (original → read back); kept out of the assertions so the rest still holds every file to
 * the contract.
 */
const KNOWN_GAPS = new Set<string>([
  // None today. tour_hr.tcx's samples at 16:02:36.000, 36.571 and 37.000 (three in two seconds)
  // each keep a FIT record: the whole second in its timestamp, the rest in the service's timestamp_ms.
]);

/** The totals a FIT file carries back exactly. */
const TOTALS = ["elapsed_time_s", "moving_time_s", "distance_m", "elevation_gain_m", "average_speed_mps", "max_speed_mps", "average_heart_rate_hz", "max_heart_rate_hz", "average_power_w", "energy_j"] as const;
type LapWire = ReturnType<typeof LapList.parse>["data"][number];
/**
 * A lap's totals but its times: a FIT lap starts and ends at a whole second (its start_time and
 * timestamp), and a lap ends where the next begins, so a lap's span comes back to the second.
 */
const lapTotals = ({ start_offset_s: _start, elapsed_time_s: _elapsed, ...totals }: LapWire) => totals;
const lapTimes = (l: LapWire) => [l.start_offset_s, l.elapsed_time_s];

const files = ["fit", "gpx", "tcx"].flatMap((dir) => readdirSync(path.join(SAMPLES, dir)).map((f) => `${dir}/${f}`));

describe("every sample activity read back through streams, laps and export", () => {
  for (const rel of files) {
    it(rel, async () => {
      const owner = await api.person({ timezone: TZ });
      const token = await api.pat(owner.id);
      const bytes = readFileSync(path.join(SAMPLES, rel));
      const done = await upload(token, bytes, path.basename(rel));
      // Files without an activity end as uploads' own tests require; nothing here to read back.
      if (done.status !== "succeeded") return;

      for (const id of done.activity_ids) {
        const full = await streamsOf(token, id);
        expectWellFormed(full);
        expect(full.original_size).toBe(full.size);
        for (const [resolution, bound] of [["low", 100], ["medium", 1000], ["high", 10_000]] as const) {
          const down = await streamsOf(token, id, resolution);
          expect(down.size).toBeLessThanOrEqual(Math.min(bound, full.size));
          expect(Object.keys(down.streams)).toEqual(Object.keys(full.streams));
          const t = down.streams.time_s!;
          expect([t[0], t.at(-1)]).toEqual([full.streams.time_s![0], full.streams.time_s!.at(-1)]);
        }
        const laps = LapList.parse(await (await ok(token, `/v1/activities/${id}/laps`)).json()).data;
        expect(laps.length).toBeGreaterThan(0);
        expect(laps.map((l) => l.index)).toEqual(laps.map((_, i) => i));

        const original = await ok(token, `/v1/activities/${id}/export?format=original`);
        expect(Buffer.from(await original.arrayBuffer()).equals(bytes)).toBe(true);

        const activity = await activityOf(token, id);
        const other = await api.person({ timezone: TZ });
        const otherToken = await api.pat(other.id);
        for (const format of ["fit", "gpx", "tcx"] as const) {
          // A GPX point needs a position (GPX 1.1 `trkpt` requires lat and lon): an indoor
          // activity has nothing a GPX file can hold.
          if (format === "gpx" && !full.streams.latlng?.some((p) => p !== null)) continue;
          const res = await ok(token, `/v1/activities/${id}/export?format=${format}`);
          const again = await upload(otherToken, new Uint8Array(await res.arrayBuffer()), `again.${format}`);
          expect(again.status, `${format}: ${JSON.stringify(again.error)}`).toBe("succeeded");
          const copy = await activityOf(otherToken, again.activity_ids[0]!);
          const copied = await streamsOf(otherToken, copy.id);
          const holds = (check: string) => !KNOWN_GAPS.has(`${rel} ${format} ${check}`);
          if (holds("start")) expect(copy.start_local, `${format} start`).toBe(activity.start_local);
          if (holds("elapsed")) expect(Math.abs(copy.elapsed_time_s - activity.elapsed_time_s), `${format} elapsed`).toBeLessThanOrEqual(1);
          if (holds("distance")) expect(close(copy.distance_m, activity.distance_m, Math.max(1, (activity.distance_m ?? 0) * 0.01)), `${format} distance ${copy.distance_m} for ${activity.distance_m}`).toBe(true);
          if (format === "fit") {
            // FIT carries every channel this service keeps: the same streams, to the file's precision.
            expect(Object.keys(copied.streams)).toEqual(Object.keys(full.streams));
            expect(copy.sport_type).toBe(activity.sport_type);
            if (holds("size")) {
              expect(copied.size).toBe(full.size);
              // Every value as stored: FIT's native fields round altitude to 0.2 m, temperature
              // to whole °C; the service's developer fields beside them carry them exactly.
              const { time_s: copiedTimes, ...copiedValues } = copied.streams;
              const { time_s: times, ...values } = full.streams;
              expect(copiedValues, `${format} streams`).toEqual(values);
              // FIT timestamps are whole seconds; the service's timestamp_ms beside them carries the
              // milliseconds (a GPX or TCX sample at 5.503 s).
              expect(copiedTimes, `${format} time_s`).toEqual(times);
            }
            // The totals and the laps' as stored: FIT's native fields round heart rates to whole
            // bpm, power to whole watts, energy to whole kcal.
            for (const key of TOTALS) if (holds(key)) expect(copy[key], `${format} ${key}`).toBe(activity[key]);
            const copiedLaps = LapList.parse(await (await ok(otherToken, `/v1/activities/${copy.id}/laps`)).json()).data;
            if (holds("laps")) {
              expect(copiedLaps.map(lapTotals), `${format} laps`).toEqual(laps.map(lapTotals));
              copiedLaps.forEach((l, i) => lapTimes(l).forEach((t, k) => expect(Math.abs(t - lapTimes(laps[i]!)[k]!), `${format} lap ${i} times`).toBeLessThanOrEqual(1)));
            }
          } else if (format === "tcx") {
            // An activity that ended after its last sample gets a last point with only a time.
            expect(copied.size - full.size).toBeGreaterThanOrEqual(0);
            expect(copied.size - full.size).toBeLessThanOrEqual(1);
          }
          for (const key of ["latlng", "heart_rate_hz", "altitude_m", "cadence_hz"] as const) {
            if (full.streams[key]?.some((v) => v !== null)) expect(Object.keys(copied.streams), `${format} keeps ${key}`).toContain(key);
          }
        }
      }
    });
  }
});

/** The messages fitsdk's Decoder reads from a FIT file. */
function decodeFit(bytes: Uint8Array) {
  const { messages } = new Decoder(Stream.fromByteArray(Array.from(bytes))).read();
  return messages as Record<string, Record<string, unknown>[] | undefined>;
}
const instants = (mesgs: Record<string, unknown>[] | undefined, field: string) => (mesgs ?? []).map((m) => (m[field] as Date).toISOString());

describe("a FIT session that starts before its first record", () => {
  // garmin-edge-500-activity.fit: the session starts at 13:00:21Z, its first record at 13:00:22Z,
  // and its first lap with the session (sample-activity.fit likewise). time_s and the laps'
  // start_offset_s count from that record; the exports used to count them from the session's
  // start, a second early, and a FIT export read back made the first lap's 2,595.7 s 2,595.
  it.each(["garmin-edge-500-activity.fit", "sample-activity.fit"])("%s: the FIT export has every sample and lap at the instant the file gave it and reads back the same laps and streams; GPX and TCX begin at the session's start", async (name) => {
    const owner = await api.person({ timezone: TZ });
    const token = await api.pat(owner.id);
    const bytes = readFileSync(path.join(SAMPLES, "fit", name));
    const file = decodeFit(bytes);
    const firstRecord = (file.recordMesgs![0]!.timestamp as Date).toISOString();
    expect(instants(file.sessionMesgs, "startTime")[0]! < firstRecord).toBe(true);
    const done = await upload(token, bytes, name);
    expect(done.status).toBe("succeeded");
    const id = done.activity_ids[0]!;
    const exported = async (format: string) => ok(token, `/v1/activities/${id}/export?format=${format}`);

    const fitBytes = new Uint8Array(await (await exported("fit")).arrayBuffer());
    const fit = decodeFit(fitBytes);
    expect(instants(fit.recordMesgs, "timestamp")[0]).toBe(firstRecord);
    // Every record at an instant the file has a record at, one per sample.
    const written = instants(fit.recordMesgs, "timestamp");
    expect(written).toHaveLength((await streamsOf(token, id)).size);
    const recorded = new Set(instants(file.recordMesgs, "timestamp"));
    expect(written.filter((t) => !recorded.has(t))).toEqual([]);
    expect(instants(fit.lapMesgs, "startTime")).toEqual(instants(file.lapMesgs, "startTime"));
    expect(instants(fit.sessionMesgs, "startTime")).toEqual(instants(file.sessionMesgs, "startTime"));

    // GPX and TCX start at their first point (CONTRACT §11), so theirs is the session's start, and
    // their points and laps come the second early that keeps the start, the elapsed time and the
    // laps they read back (every sample's round trip above holds them to it).
    const sessionStart = instants(file.sessionMesgs, "startTime")[0];
    const firstTime = (xml: string, element: string) => new RegExp(`<${element}[ >][^]*?<Time>([^<]+)</Time>`, "i").exec(xml)?.[1];
    const gpx = await (await exported("gpx")).text();
    expect(new Date(/<trkpt [^>]*>(?:<ele>[^<]*<\/ele>)?<time>([^<]+)<\/time>/.exec(gpx)![1]!).toISOString()).toBe(sessionStart);
    const tcx = await (await exported("tcx")).text();
    expect(new Date(firstTime(tcx, "Trackpoint")!).toISOString()).toBe(sessionStart);
    expect(new Date(/<Id>([^<]+)<\/Id>/.exec(tcx)![1]!).toISOString()).toBe(sessionStart);

    const other = await api.person({ timezone: TZ });
    const otherToken = await api.pat(other.id);
    const again = await upload(otherToken, fitBytes, "again.fit");
    expect(again.status, JSON.stringify(again.error)).toBe("succeeded");
    const copyId = again.activity_ids[0]!;
    const lapsOf = async (t: string, a: string) => LapList.parse(await (await ok(t, `/v1/activities/${a}/laps`)).json()).data;
    const laps = await lapsOf(token, id);
    expect(await lapsOf(otherToken, copyId)).toEqual(laps);
    expect(await streamsOf(otherToken, copyId)).toEqual({ ...(await streamsOf(token, id)), activity_id: copyId });
    expect((await activityOf(otherToken, copyId)).start_local).toBe((await activityOf(token, id)).start_local);
  });
});

describe("an average speed derived above the maximum", () => {
  // A multisport file whose second leg states no speeds: its average is its distance over its
  // time, 4,800 m in 600 s, above the 7.5 m/s its records' speed reaches (a wheel sensor beside a
  // GPS distance); its laps likewise. The FIT export stated that 8 m/s as its average, and the
  // file uploaded again read as one contradicting itself: the maximum was gone.
  const file = rideWithLegFasterThanItsMaximum();
  const lapsOf = async (token: string, id: string) => LapList.parse(await (await ok(token, `/v1/activities/${id}/laps`)).json()).data;

  /** The activity's FIT export uploaded again by another athlete: the same totals, laps and streams. */
  async function expectFitRoundTrip(token: string, id: string) {
    const bytes = new Uint8Array(await (await ok(token, `/v1/activities/${id}/export?format=fit`)).arrayBuffer());
    const other = await api.person({ timezone: TZ });
    const otherToken = await api.pat(other.id);
    const again = await upload(otherToken, bytes, "again.fit");
    expect(again.status, JSON.stringify(again.error)).toBe("succeeded");
    const copyId = again.activity_ids[0]!;
    const [activity, copy] = [await activityOf(token, id), await activityOf(otherToken, copyId)];
    for (const key of TOTALS) expect(copy[key], key).toBe(activity[key]);
    expect(await lapsOf(otherToken, copyId)).toEqual(await lapsOf(token, id));
    expect(await streamsOf(otherToken, copyId)).toEqual({ ...(await streamsOf(token, id)), activity_id: copyId });
    return activity;
  }

  it("keeps the average and the maximum through a FIT export uploaded again, and each leg's distance counts from its start", async () => {
    const owner = await api.person({ timezone: TZ });
    const token = await api.pat(owner.id);
    const done = await upload(token, file, "multisport.fit");
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.activity_ids).toHaveLength(2);
    const leg = done.activity_ids[1]!;
    expect(await activityOf(token, leg)).toMatchObject({ distance_m: 4800, average_speed_mps: 8, max_speed_mps: 7.5 });
    expect((await lapsOf(token, leg)).map((l) => [l.average_speed_mps, l.max_speed_mps])).toEqual([[8, 7.5], [8, 7.5]]);
    for (const id of done.activity_ids) {
      const distance = (await streamsOf(token, id)).streams.distance_m!;
      expect([distance[0], distance.at(-1)]).toEqual([0, 4800]);
      await expectFitRoundTrip(token, id);
    }
  });

  it("keeps them after a change of distance derives the average again above the maximum", async () => {
    const owner = await api.person({ timezone: TZ });
    const token = await api.pat(owner.id);
    const done = await upload(token, file, "multisport.fit");
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    const first = done.activity_ids[0]!;
    expect(await activityOf(token, first)).toMatchObject({ average_speed_mps: 8, max_speed_mps: 8 });
    const res = await api.call(token, "PATCH", `/v1/activities/${first}`, { body: { distance_m: 6000 } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ distance_m: 6000, average_speed_mps: 10, max_speed_mps: 8 });
    expect(await expectFitRoundTrip(token, first)).toMatchObject({ distance_m: 6000, average_speed_mps: 10, max_speed_mps: 8 });
  });
});

describe("an activity that starts within a second", () => {
  // start_local keeps whole seconds: a GPX track whose first point is at 08:00:00.700Z is stored
  // as starting at 08:00:00, and its samples are counted from the point itself, 0.7 s later.
  it("exports its samples at their instants, to the millisecond", async () => {
    const owner = await api.person({ timezone: TZ });
    const token = await api.pat(owner.id);
    const times = ["2026-03-02T08:00:00.700Z", "2026-03-02T08:00:01.700Z", "2026-03-02T08:00:03.200Z", "2026-03-02T08:00:05Z"];
    const pts = times.map((t, i) => `<trkpt lat="${59.9 + i * 1e-4}" lon="10.7"><time>${t}</time></trkpt>`);
    const bytes = new TextEncoder().encode(
      `<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>${pts.join("")}</trkseg></trk></gpx>`,
    );
    const done = await upload(token, bytes, "fraction.gpx");
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    const id = done.activity_ids[0]!;
    const exported = async (format: string) => (await ok(token, `/v1/activities/${id}/export?format=${format}`)).text();
    const gpxTimes = [...(await exported("gpx")).matchAll(/<trkpt [^>]*><time>([^<]+)<\/time>/g)].map((m) => new Date(m[1]!).toISOString());
    expect(gpxTimes).toEqual(times.map((t) => new Date(t).toISOString()));
    const tcxTimes = [...(await exported("tcx")).matchAll(/<Trackpoint><Time>([^<]+)<\/Time>/g)].map((m) => new Date(m[1]!).toISOString());
    expect(tcxTimes).toEqual(times.map((t) => new Date(t).toISOString()));
  });
});

describe("deleting uploaded activities", () => {
  it("drops the file with the last activity, and the same file can then be uploaded again", async () => {
    const owner = await api.person({ timezone: TZ });
    const token = await api.pat(owner.id);
    const bytes = readFileSync(path.join(SAMPLES, "tcx/sample.tcx"));
    const first = await upload(token, bytes, "sample.tcx");
    expect(first.status).toBe("succeeded");
    const refused = await upload(token, bytes, "sample.tcx");
    expect(refused.error?.code).toBe("duplicate_activity");
    for (const id of first.activity_ids) expect((await api.call(token, "DELETE", `/v1/activities/${id}`)).status).toBe(204);
    expect(await countRows(uploadFiles, eq(uploadFiles.uploadId, first.id))).toBe(0);
    const again = await upload(token, bytes, "sample.tcx");
    expect(again.status).toBe("succeeded");
    expect(Object.keys((await streamsOf(token, again.activity_ids[0]!)).streams).every((k) => (STREAM_KEYS as readonly string[]).includes(k))).toBe(true);
  });

  it("frees an upload's external_id with its last activity: the file sent again under it is made anew", async () => {
    const owner = await api.person({ timezone: TZ });
    const token = await api.pat(owner.id);
    const bytes = readFileSync(path.join(SAMPLES, "tcx/sample.tcx"));
    const first = await upload(token, bytes, "sample.tcx", { external_id: "watch-7" });
    expect(first).toMatchObject({ status: "succeeded", external_id: "watch-7" });
    // Replayed while its activity stands.
    expect((await upload(token, bytes, "sample.tcx", { external_id: "watch-7" })).id).toBe(first.id);
    for (const id of first.activity_ids) expect((await api.call(token, "DELETE", `/v1/activities/${id}`)).status).toBe(204);
    const again = await upload(token, bytes, "sample.tcx", { external_id: "watch-7" });
    expect(again.id).not.toBe(first.id);
    expect(again).toMatchObject({ status: "succeeded", external_id: "watch-7", error: null });
    expect((await api.call(token, "GET", `/v1/activities/${again.activity_id}`)).status).toBe(200);
    // The old upload is still there to poll, without the id it gave up.
    expect(await (await api.call(token, "GET", `/v1/uploads/${first.id}`)).json()).toMatchObject({ id: first.id, status: "succeeded", external_id: null });
    // Its new holder keeps it while its activity stands.
    expect((await upload(token, bytes, "sample.tcx", { external_id: "watch-7" })).id).toBe(again.id);
  });
});
