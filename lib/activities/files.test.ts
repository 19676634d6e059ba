import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { activities, activityLaps, activityStreams, events, uploadFiles, uploads } from "../db/schema";
import { decodeStreams, encodeStreams } from "../files/stream-codec";
import { STREAM_KEYS, type Lap as ParsedLap, type Streams } from "../files/types";
import { newId } from "../ids";
import type { Scope } from "../auth/scopes";
import { ActivityStreams, LapList } from "./file-schemas";
import { sessionCookieFor } from "../auth/test-session";
import { contentDisposition } from "../http/file-body";
import { closeFileWorkers, DEFAULT_POOL_OPTIONS, fileWorkerIsFree, runOnSharedPool } from "../files/worker/pool";

const api = setupApi();

const READ_ALL: Scope[] = ["activities.read", "location.read"];

/**
 * A ride of `n` samples at 1 Hz with every channel, as stored (at the codec's precision); every
 * 7th sample lacks heart rate, as a strap drops out.
 */
function ride(n: number, opts: { without?: (keyof Streams)[] } = {}): Streams {
  return decodeStreams(encodeStreams(rawRide(n, opts)));
}

function rawRide(n: number, opts: { without?: (keyof Streams)[] }): Streams {
  const s: Streams = {
    size: n,
    time_s: Array.from({ length: n }, (_, i) => i),
    latlng: Array.from({ length: n }, (_, i) => [59.9 + i * 1e-5, 10.7 + Math.sin(i / 50) * 1e-3] as [number, number]),
    distance_m: Array.from({ length: n }, (_, i) => i * 8.5),
    altitude_m: Array.from({ length: n }, (_, i) => 100 + 20 * Math.sin(i / 300)),
    speed_mps: Array.from({ length: n }, (_, i) => 8 + Math.sin(i / 30)),
    heart_rate_hz: Array.from({ length: n }, (_, i) => (i % 7 === 3 ? null : 2.2 + (i % 40) / 100)),
    cadence_hz: Array.from({ length: n }, (_, i) => 1.5 + (i % 10) / 100),
    power_w: Array.from({ length: n }, (_, i) => 200 + (i % 50)),
    temperature_c: Array.from({ length: n }, () => 18),
  };
  for (const k of opts.without ?? []) delete (s as Record<string, unknown>)[k];
  return s;
}

const LAPS: ParsedLap[] = [
  { startOffsetS: 0, elapsedTimeS: 600, movingTimeS: 590, distanceM: 5000, elevationGainM: 12.5, averageSpeedMps: 8.4, maxSpeedMps: 11, averageHeartRateHz: 2.4, maxHeartRateHz: 2.9, averagePowerW: 210 },
  { startOffsetS: 600, elapsedTimeS: 300.5, movingTimeS: null, distanceM: null, elevationGainM: null, averageSpeedMps: null, maxSpeedMps: null, averageHeartRateHz: null, maxHeartRateHz: null, averagePowerW: null },
];

type Seeded = { activityId: string; uploadId: string; bytes: Uint8Array };

/**
 * An uploaded activity as processing leaves it: the upload and its file, the activity, its
 * streams row and its laps, inserted directly. `activities` > 1 makes a multisport file.
 */
async function uploaded(
  athleteId: string,
  opts: { streams?: Streams; laps?: ParsedLap[]; dataType?: "fit" | "gpx" | "tcx"; gzip?: boolean; bytes?: Uint8Array; activities?: number; name?: string } = {},
): Promise<Seeded & { activityIds: string[] }> {
  const db = await api.db();
  // Written out: the upload id prefix is the uploads code's to define.
  const uploadId = `upl_${randomBytes(11).toString("hex")}`;
  const content = opts.bytes ?? new TextEncoder().encode(`<gpx version="1.1"><trk><name>${uploadId}</name></trk></gpx>`);
  const bytes = opts.gzip ? new Uint8Array(gzipSync(content)) : content;
  const activityIds = Array.from({ length: opts.activities ?? 1 }, () => newId("act"));
  await db.insert(uploads).values({
    id: uploadId,
    athleteId,
    uploader: "athlete",
    status: "succeeded",
    dataType: opts.dataType ?? "gpx",
    fileName: "ride.gpx",
    gzip: opts.gzip ?? false,
    receivedSha256: "r".repeat(64),
    contentSha256: uploadId,
    sizeBytes: bytes.byteLength,
    activityIds,
  });
  await db.insert(uploadFiles).values({ uploadId, chunk: 0, bytes });
  const streams = opts.streams ?? ride(120);
  for (const id of activityIds) {
    await db.insert(activities).values({
      id,
      athleteId,
      name: opts.name ?? "Morning Ride",
      sportType: "ride",
      startLocal: "2026-03-01 07:30:00",
      elapsedTimeS: streams.size,
      distanceM: 1000,
      source: "upload",
      uploadId,
    });
    await db.insert(activityStreams).values({
      activityId: id,
      size: streams.size,
      keys: STREAM_KEYS.filter((k) => streams[k] !== undefined),
      data: encodeStreams(streams),
    });
    const laps = opts.laps ?? LAPS;
    if (laps.length) await db.insert(activityLaps).values(laps.map((l, index) => ({ activityId: id, index, ...l })));
  }
  return { activityId: activityIds[0]!, activityIds, uploadId, bytes };
}

async function manual(athleteId: string): Promise<string> {
  const id = newId("act");
  await (await api.db()).insert(activities).values({ id, athleteId, name: "Gym", sportType: "strength", startLocal: "2026-03-02 18:00:00", elapsedTimeS: 3600 });
  return id;
}

async function streamsOf(token: string, activityId: string, query = "") {
  const res = await api.call(token, "GET", `/v1/activities/${activityId}/streams${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return ActivityStreams.parse(await res.json());
}

async function problem(res: Response, status: number, code: string) {
  const body = (await res.json()) as { code: string; detail?: string; errors?: { field: string; code: string }[] };
  expect({ status: res.status, code: body.code }, JSON.stringify(body)).toEqual({ status, code });
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  return body;
}

describe("GET /v1/activities/{activity_id}/streams", () => {
  it("answers every recorded sample of every channel by default, as stored", async () => {
    const ava = await api.person();
    const streams = ride(300, { without: ["power_w"] });
    const { activityId } = await uploaded(ava.id, { streams });
    const answer = await streamsOf(await api.pat(ava.id, READ_ALL), activityId);
    expect(answer).toMatchObject({ activity_id: activityId, resolution: "full", original_size: 300, size: 300 });
    // A channel never recorded is left out, not filled with nulls.
    expect(Object.keys(answer.streams)).toEqual(STREAM_KEYS.filter((k) => k !== "power_w"));
    for (const key of Object.keys(answer.streams) as (keyof typeof answer.streams)[]) {
      expect(answer.streams[key], key).toEqual(streams[key]);
    }
    expect(answer.streams.heart_rate_hz![3]).toBeNull();
  });

  it("leaves latlng out by default for a token without location.read, and refuses it when asked for", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, ["activities.read"]);
    const answer = await streamsOf(token, activityId);
    expect(Object.keys(answer.streams)).toEqual(STREAM_KEYS.filter((k) => k !== "latlng"));

    const res = await api.call(token, "GET", `/v1/activities/${activityId}/streams?keys=time_s,latlng`);
    await problem(res, 403, "insufficient_scope");
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="location.read"');

    const located = await streamsOf(await api.pat(ava.id, READ_ALL), activityId, "?keys=latlng");
    expect(Object.keys(located.streams)).toEqual(["latlng"]);
    expect(located.streams.latlng![0]).toEqual([59.9, 10.7]);
  });

  it("answers the keys asked for, in the documented order, leaving out those never recorded", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id, { streams: ride(50, { without: ["power_w"] }) });
    const token = await api.pat(ava.id, READ_ALL);
    const answer = await streamsOf(token, activityId, "?keys=heart_rate_hz,%20time_s,power_w,heart_rate_hz");
    expect(Object.keys(answer.streams)).toEqual(["time_s", "heart_rate_hz"]);
    expect(answer.size).toBe(50);
  });

  it("refuses an unknown key or resolution with invalid_enum_value, naming the field", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, READ_ALL);
    const bad = await problem(await api.call(token, "GET", `/v1/activities/${activityId}/streams?keys=time_s,heartrate`), 400, "invalid_enum_value");
    // The field is the query parameter; which of its items is wrong is in the detail.
    expect(bad.errors).toEqual([expect.objectContaining({ field: "keys", code: "invalid_enum_value", detail: expect.stringMatching(/^item 2: /) })]);
    await problem(await api.call(token, "GET", `/v1/activities/${activityId}/streams?keys=`), 400, "invalid_enum_value");
    const res = await problem(await api.call(token, "GET", `/v1/activities/${activityId}/streams?resolution=ultra`), 400, "invalid_enum_value");
    expect(res.errors).toEqual([expect.objectContaining({ field: "resolution" })]);
  });

  it("downsamples within each resolution's bound, keeping the first and last sample and only recorded ones", async () => {
    const ava = await api.person();
    const streams = ride(14_400);
    const { activityId } = await uploaded(ava.id, { streams });
    const token = await api.pat(ava.id, READ_ALL);
    const bounds = { low: 100, medium: 1000, high: 10_000, full: 14_400 } as const;
    for (const [resolution, bound] of Object.entries(bounds)) {
      const answer = await streamsOf(token, activityId, `?resolution=${resolution}`);
      expect(answer.resolution).toBe(resolution);
      expect(answer.original_size).toBe(14_400);
      expect(answer.size, resolution).toBeLessThanOrEqual(bound);
      expect(answer.size, resolution).toBeGreaterThan(bound / 2);
      const times = answer.streams.time_s!;
      expect(times).toHaveLength(answer.size);
      expect(times[0]).toBe(0);
      expect(times.at(-1)).toBe(14_399);
      // time_s is the sample index here, so every other channel must be that sample's value.
      expect(times.every((t, j) => j === 0 || t > times[j - 1]!)).toBe(true);
      for (const key of STREAM_KEYS) expect(answer.streams[key], `${resolution} ${key}`).toEqual(times.map((t) => streams[key]![t]));
    }
  });

  it("a streams row written again is answered from its new value, never from the answer kept for the one before", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id, { streams: ride(300) });
    const token = await api.pat(ava.id, READ_ALL);
    for (const query of ["", "?resolution=medium"]) {
      expect((await streamsOf(token, activityId, query)).original_size).toBe(300);
      // The same answer again, now from what was kept.
      expect((await streamsOf(token, activityId, query)).original_size).toBe(300);
    }
    // Another value of the same length cannot be told apart by its length: by its row version it is.
    const again = ride(300);
    again.power_w = again.power_w!.map((w) => (w === null ? null : w + 1));
    const db = await api.db();
    await db.update(activityStreams).set({ data: encodeStreams(again) }).where(eq(activityStreams.activityId, activityId));
    expect((await streamsOf(token, activityId)).streams.power_w).toEqual(again.power_w);
    await db.update(activityStreams).set({ size: 200, data: encodeStreams(ride(200)) }).where(eq(activityStreams.activityId, activityId));
    expect((await streamsOf(token, activityId, "?resolution=medium")).original_size).toBe(200);
  });

  it("a kept answer is sent whole, byte for byte the first, to every request", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id, { streams: ride(600) });
    const token = await api.pat(ava.id, READ_ALL);
    const bodies: Buffer[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api.call(token, "GET", `/v1/activities/${activityId}/streams?resolution=medium`);
      expect(res.status).toBe(200);
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get("content-type")).toBe("application/json");
      bodies.push(body);
    }
    expect(JSON.parse(bodies[0]!.toString()).original_size).toBe(600);
    expect(bodies[1]!.equals(bodies[0]!)).toBe(true);
    expect(bodies[2]!.equals(bodies[0]!)).toBe(true);
  });

  it("answers an activity recorded by hand with no samples", async () => {
    const ava = await api.person();
    const id = await manual(ava.id);
    const token = await api.pat(ava.id, READ_ALL);
    expect(await streamsOf(token, id, "?resolution=low")).toEqual({ activity_id: id, resolution: "low", original_size: 0, size: 0, streams: {} });
    expect(await streamsOf(token, id, "?keys=latlng")).toEqual({ activity_id: id, resolution: "full", original_size: 0, size: 0, streams: {} });
  });
});

describe("reach over streams and laps", () => {
  it("lets the owner and a coach of the athlete's team read; anyone else, or an unknown id, gets 404", async () => {
    const ava = await api.person();
    const coach = await api.person();
    const invitedCoach = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [ava.id]);
    await api.team(invitedCoach.id, [ava.id], { memberStatus: "invited" });
    const { activityId } = await uploaded(ava.id);

    for (const who of [ava, coach]) {
      const token = await api.pat(who.id, READ_ALL);
      expect((await streamsOf(token, activityId)).size).toBe(120);
      const laps = await api.call(token, "GET", `/v1/activities/${activityId}/laps`);
      expect(laps.status).toBe(200);
      expect(LapList.parse(await laps.json()).data).toHaveLength(2);
    }
    for (const who of [invitedCoach, stranger]) {
      const token = await api.pat(who.id, READ_ALL);
      for (const path of ["streams", "laps", "export?format=original"]) {
        await problem(await api.call(token, "GET", `/v1/activities/${activityId}/${path}`), 404, "not_found");
      }
    }
    const own = await api.pat(ava.id, READ_ALL);
    for (const path of ["streams", "laps", "export"]) {
      await problem(await api.call(own, "GET", `/v1/activities/act_unknown/${path}`), 404, "not_found");
    }
  });

  it("needs activities.read, and refuses an app's own client-credentials token", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, ["location.read", "activities.write"]);
    for (const path of ["streams", "laps"]) {
      const res = await api.call(token, "GET", `/v1/activities/${activityId}/${path}`);
      await problem(res, 403, "insufficient_scope");
      expect(res.headers.get("www-authenticate")).toContain('scope="activities.read"');
    }
    const app = await api.app();
    await problem(await api.call(app.token, "GET", `/v1/activities/${activityId}/streams`), 403, "client_credentials_not_allowed");
  });
});

describe("GET /v1/activities/{activity_id}/laps", () => {
  it("lists the file's laps in order, exactly as CONTRACT §11 shapes them", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id, { laps: [LAPS[1]!, LAPS[0]!].map((l, i) => ({ ...l, startOffsetS: i * 300.5 })) });
    const res = await api.call(await api.pat(ava.id, ["activities.read"]), "GET", `/v1/activities/${activityId}/laps`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      data: [
        { index: 0, start_offset_s: 0, elapsed_time_s: 300.5, moving_time_s: null, distance_m: null, elevation_gain_m: null, average_speed_mps: null, max_speed_mps: null, average_heart_rate_hz: null, max_heart_rate_hz: null, average_power_w: null },
        { index: 1, start_offset_s: 300.5, elapsed_time_s: 600, moving_time_s: 590, distance_m: 5000, elevation_gain_m: 12.5, average_speed_mps: 8.4, max_speed_mps: 11, average_heart_rate_hz: 2.4, max_heart_rate_hz: 2.9, average_power_w: 210 },
      ],
    });
  });

  it("has none for an activity recorded by hand", async () => {
    const ava = await api.person();
    const res = await api.call(await api.pat(ava.id, ["activities.read"]), "GET", `/v1/activities/${await manual(ava.id)}/laps`);
    expect(await res.json()).toEqual({ data: [] });
  });
});

describe("GET /v1/activities/{activity_id}/export", () => {
  it("answers the original file byte for byte, as an attachment with the usual headers", async () => {
    const ava = await api.person();
    const bytes = new Uint8Array([0x0e, 0x10, 0x43, 0x08, 0x00, 0x00, 0x00, 0x00, 0x2e, 0x46, 0x49, 0x54, 0xff, 0x00, 0x80]);
    const { activityId } = await uploaded(ava.id, { dataType: "fit", bytes, name: 'Tour "de" Østfold / day 2' });
    const token = await api.pat(ava.id, READ_ALL);
    for (const query of ["", "?format=original"]) {
      const res = await api.call(token, "GET", `/v1/activities/${activityId}/export${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/vnd.ant.fit");
      expect(res.headers.get("content-disposition")).toBe(
        `attachment; filename="Tour-de-_stfold-day-2-2026-03-01-original.fit"; filename*=UTF-8''Tour-de-%C3%98stfold-day-2-2026-03-01-original.fit`,
      );
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get("ratelimit")).toContain('"15min"');
      expect(res.headers.get("ratelimit-policy")).toContain('"daily"');
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    }
  });

  it("names the file after an activity of any name, letters outside the BMP at the cut included", async () => {
    const ava = await api.person();
    // Cut at 80 UTF-16 units, the last letter would be half a surrogate pair; the name keeps 80 letters.
    const name = `a${"𝐀".repeat(90)}`;
    const { activityId } = await uploaded(ava.id, { dataType: "fit", name });
    const res = await api.call(await api.pat(ava.id, READ_ALL), "GET", `/v1/activities/${activityId}/export?format=original`);
    expect(res.status, await res.clone().text()).toBe(200);
    const encoded = /filename\*=UTF-8''(.+)$/.exec(res.headers.get("content-disposition")!)![1]!;
    expect(decodeURIComponent(encoded)).toBe(`a${"𝐀".repeat(79)}-2026-03-01-original.fit`);
    expect(contentDisposition("x\ud800y")).toBe(`attachment; filename="x_y"; filename*=UTF-8''x%EF%BF%BDy`);
  });

  it("names the original and the file generated in its format apart, each safe to save", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id, { dataType: "fit", name: "Bergen/Ulriken ..\\ Østre løype" });
    const token = await api.pat(ava.id, READ_ALL);
    const named = async (format: string) => {
      const res = await api.call(token, "GET", `/v1/activities/${activityId}/export?format=${format}`);
      expect(res.status, await res.clone().text()).toBe(200);
      const header = res.headers.get("content-disposition")!;
      // RFC 6266: a quoted ASCII `filename`, and the exact name in `filename*` (RFC 8187).
      const match = /^attachment; filename="([\x20-\x7e]+)"; filename\*=UTF-8''([A-Za-z0-9%._~!-]+)$/.exec(header);
      expect(match, header).not.toBeNull();
      const [ascii, exact] = [match![1]!, decodeURIComponent(match![2]!)];
      for (const n of [ascii, exact]) expect(n, header).not.toMatch(/[/\\"]|^\.|\.\./);
      return { ascii, exact };
    };
    const original = await named("original");
    const generated = await named("fit");
    expect(original.exact).toBe("Bergen-Ulriken-Østre-løype-2026-03-01-original.fit");
    expect(generated.exact).toBe("Bergen-Ulriken-Østre-løype-2026-03-01.fit");
    expect(original.ascii).not.toBe(generated.ascii);
  });

  it("answers a gzip upload as the same gzip bytes", async () => {
    const ava = await api.person();
    const { activityId, bytes } = await uploaded(ava.id, { dataType: "tcx", gzip: true, bytes: new TextEncoder().encode("<TrainingCenterDatabase/>") });
    const res = await api.call(await api.pat(ava.id, READ_ALL), "GET", `/v1/activities/${activityId}/export?format=original`);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    expect(res.headers.get("content-disposition")).toContain('filename="Morning-Ride-2026-03-01-original.tcx.gz"');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it("reads a file larger than one slice back whole, byte for byte", async () => {
    const ava = await api.person();
    const bytes = new Uint8Array(randomBytes(9 * 1024 * 1024 + 17));
    const { activityId } = await uploaded(ava.id, { dataType: "fit", bytes });
    const res = await api.call(await api.pat(ava.id, READ_ALL), "GET", `/v1/activities/${activityId}/export?format=original`);
    expect(res.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("generates FIT, GPX and TCX files with their media types", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, READ_ALL);
    const types = { fit: "application/vnd.ant.fit", gpx: "application/gpx+xml", tcx: "application/vnd.garmin.tcx+xml" };
    for (const [format, type] of Object.entries(types)) {
      const res = await api.call(token, "GET", `/v1/activities/${activityId}/export?format=${format}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("content-disposition")).toContain(`filename="Morning-Ride-2026-03-01.${format}"`);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it("answers 503 service_unavailable with Retry-After while the file workers' queue is full, and the export once it is not", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, READ_ALL);
    const gpx = () => api.call(token, "GET", `/v1/activities/${activityId}/export?format=gpx`);
    expect((await gpx()).status).toBe(200); // the worker is up
    expect(fileWorkerIsFree()).toBe(true);
    // One task holds the worker until the pool is closed; one waiting fills the queue's byte budget.
    const held = [
      runOnSharedPool({ op: "spin", ms: 120_000 }).catch((e: unknown) => e),
      runOnSharedPool({ op: "spin", ms: 1 }, DEFAULT_POOL_OPTIONS.maxQueuedBytes).catch((e: unknown) => e),
    ];
    try {
      const res = await gpx();
      const body = await problem(res, 503, "service_unavailable");
      expect(body.detail).toBe("The service is busy reading other files; try again shortly.");
      expect(res.headers.get("retry-after")).toBe("5");
      expect(res.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await closeFileWorkers();
      await Promise.all(held);
    }
    expect((await gpx()).status).toBe(200);
  });

  it("has no GPX for an activity that recorded no positions, saying which formats it has", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id, { streams: ride(600, { without: ["latlng"] }) });
    const token = await api.pat(ava.id, READ_ALL);
    const res = await api.call(token, "GET", `/v1/activities/${activityId}/export?format=gpx`);
    const body = await problem(res, 404, "not_found");
    expect(body.detail).toBe(`Activity ${activityId} recorded no positions, and a GPX file is a track of them: export it as FIT or TCX.`);
    for (const format of ["original", "fit", "tcx"]) {
      const other = await api.call(token, "GET", `/v1/activities/${activityId}/export?format=${format}`);
      expect(other.status, `${format}: ${await other.clone().text()}`).toBe(200);
    }
  });

  it("needs location.read besides activities.read, naming what the token lacks", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const cases: [Scope[], string][] = [
      [["activities.read"], "location.read"],
      [["location.read"], "activities.read"],
      [["athlete.read"], "activities.read location.read"],
    ];
    for (const [scopes, missing] of cases) {
      const res = await api.call(await api.pat(ava.id, scopes), "GET", `/v1/activities/${activityId}/export?format=gpx`);
      await problem(res, 403, "insufficient_scope");
      expect(res.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="${missing}"`);
    }
  });

  it("refuses an unknown format, and has nothing to export for an activity recorded by hand", async () => {
    const ava = await api.person();
    const { activityId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, READ_ALL);
    await problem(await api.call(token, "GET", `/v1/activities/${activityId}/export?format=kml`), 400, "invalid_enum_value");
    const id = await manual(ava.id);
    for (const format of ["original", "fit", "gpx", "tcx"]) {
      await problem(await api.call(token, "GET", `/v1/activities/${id}/export?format=${format}`), 404, "not_found");
    }
  });
});

describe("DELETE /v1/activities/{activity_id}", () => {
  it("deletes the activity, its streams and laps and its file, and emits activity.deleted in the same write", async () => {
    const ava = await api.person();
    const { activityId, uploadId } = await uploaded(ava.id);
    const token = await api.pat(ava.id, ["activities.read", "activities.write", "location.read"]);
    const res = await api.call(token, "DELETE", `/v1/activities/${activityId}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    for (const path of ["", "/streams", "/laps", "/export"]) {
      await problem(await api.call(token, "GET", `/v1/activities/${activityId}${path}`), 404, "not_found");
    }
    await problem(await api.call(token, "DELETE", `/v1/activities/${activityId}`), 404, "not_found");
    expect(await countRows(activityStreams, eq(activityStreams.activityId, activityId))).toBe(0);
    expect(await countRows(activityLaps, eq(activityLaps.activityId, activityId))).toBe(0);
    expect(await countRows(uploadFiles, eq(uploadFiles.uploadId, uploadId))).toBe(0);
    const emitted = await (await api.db()).select().from(events).where(eq(events.objectId, activityId));
    expect(emitted.map((e) => [e.type, e.objectType, e.athleteId])).toEqual([["activity.deleted", "activity", ava.id]]);
  });

  it("keeps a multisport file until the last activity made from it is deleted", async () => {
    const ava = await api.person();
    const { activityIds, uploadId } = await uploaded(ava.id, { activities: 2 });
    const token = await api.pat(ava.id, ["activities.write"]);
    expect((await api.call(token, "DELETE", `/v1/activities/${activityIds[0]}`)).status).toBe(204);
    expect(await countRows(uploadFiles, eq(uploadFiles.uploadId, uploadId))).toBe(1);
    const read = await api.pat(ava.id, READ_ALL);
    expect((await api.call(read, "GET", `/v1/activities/${activityIds[1]}/export`)).status).toBe(200);
    expect((await api.call(token, "DELETE", `/v1/activities/${activityIds[1]}`)).status).toBe(204);
    expect(await countRows(uploadFiles, eq(uploadFiles.uploadId, uploadId))).toBe(0);
    // The upload's record stays for whoever polls it; only its bytes are gone.
    expect(await countRows(uploads, eq(uploads.id, uploadId))).toBe(1);
  });

  it("drops the file once, when the last two activities of a file are deleted at the same time", async () => {
    const ava = await api.person();
    const { activityIds, uploadId } = await uploaded(ava.id, { activities: 2 });
    const token = await api.pat(ava.id, ["activities.write"]);
    const answers = await Promise.all(activityIds.map((id) => api.call(token, "DELETE", `/v1/activities/${id}`)));
    expect(answers.map((r) => r.status)).toEqual([204, 204]);
    expect(await countRows(uploadFiles, eq(uploadFiles.uploadId, uploadId))).toBe(0);
  });

  it("deletes an activity recorded by hand", async () => {
    const ava = await api.person();
    const id = await manual(ava.id);
    const token = await api.pat(ava.id, ["activities.read", "activities.write"]);
    expect((await api.call(token, "DELETE", `/v1/activities/${id}`)).status).toBe(204);
    await problem(await api.call(token, "GET", `/v1/activities/${id}`), 404, "not_found");
  });

  it("is refused to anyone but the owner, and without activities.write, changing nothing", async () => {
    const ava = await api.person();
    const coach = await api.person();
    const stranger = await api.person();
    await api.team(coach.id, [ava.id]);
    const { activityId, uploadId } = await uploaded(ava.id);
    const eventsBefore = await countRows(events);
    await problem(await api.call(await api.pat(coach.id), "DELETE", `/v1/activities/${activityId}`), 403, "athlete_not_reachable");
    await problem(await api.call(await api.pat(stranger.id), "DELETE", `/v1/activities/${activityId}`), 404, "not_found");
    const readOnly = await api.call(await api.pat(ava.id, ["activities.read"]), "DELETE", `/v1/activities/${activityId}`);
    await problem(readOnly, 403, "insufficient_scope");
    expect(readOnly.headers.get("www-authenticate")).toContain('scope="activities.write"');
    await problem(await api.call(await api.pat(ava.id), "DELETE", "/v1/activities/act_unknown"), 404, "not_found");
    expect(await countRows(activities, eq(activities.id, activityId))).toBe(1);
    expect(await countRows(activityStreams, eq(activityStreams.activityId, activityId))).toBe(1);
    expect(await countRows(uploadFiles, eq(uploadFiles.uploadId, uploadId))).toBe(1);
    expect(await countRows(events)).toBe(eventsBefore);
  });

  it("answers a retry with the same Idempotency-Key as the first time", async () => {
    const ava = await api.person();
    const id = await manual(ava.id);
    const token = await api.pat(ava.id, ["activities.write"]);
    const headers = { "idempotency-key": `del-${id}` };
    const first = await api.call(token, "DELETE", `/v1/activities/${id}`, { headers });
    const again = await api.call(token, "DELETE", `/v1/activities/${id}`, { headers });
    expect([first.status, again.status]).toEqual([204, 204]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await countRows(events, eq(events.objectId, id))).toBe(1);
  });
});

describe("the console's routes for the activity page", () => {
  /** As the console's pages send it: the session cookie, and Origin on writes. */
  async function consoleCall(userId: string, method: string, path: string) {
    const headers: Record<string, string> = { cookie: await sessionCookieFor(userId), ...(method === "GET" ? {} : { origin: api.url }) };
    return fetch(`${api.url}/api/console/activities/${path}`, { method, headers });
  }

  it("serve streams (latlng included: the person acts with every scope), laps, downloads and delete to the owner", async () => {
    const ava = await api.person();
    const { activityId, bytes } = await uploaded(ava.id);
    const streams = ActivityStreams.parse(await (await consoleCall(ava.id, "GET", `${activityId}/streams?resolution=low`)).json());
    expect(Object.keys(streams.streams)).toEqual([...STREAM_KEYS]);
    expect(streams.size).toBeLessThanOrEqual(100);
    expect(LapList.parse(await (await consoleCall(ava.id, "GET", `${activityId}/laps`)).json()).data).toHaveLength(2);
    const file = await consoleCall(ava.id, "GET", `${activityId}/export?format=original`);
    expect(file.headers.get("content-type")).toBe("application/gpx+xml");
    expect(file.headers.get("content-disposition")).toMatch(/^attachment; filename="Morning-Ride-2026-03-01-original\.gpx"; /);
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);

    const deleted = await consoleCall(ava.id, "DELETE", activityId);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toBeNull();
    expect((await consoleCall(ava.id, "GET", `${activityId}/streams`)).status).toBe(404);
  });

  it("refuse a delete from another site, and anyone the activity is not theirs to see", async () => {
    const ava = await api.person();
    const stranger = await api.person();
    const { activityId } = await uploaded(ava.id);
    const crossSite = await fetch(`${api.url}/api/console/activities/${activityId}`, {
      method: "DELETE",
      headers: { cookie: await sessionCookieFor(ava.id), origin: "https://evil.example" },
    });
    expect(crossSite.status).toBe(400);
    for (const path of ["streams", "laps", "export"]) expect((await consoleCall(stranger.id, "GET", `${activityId}/${path}`)).status).toBe(404);
    expect((await consoleCall(stranger.id, "DELETE", activityId)).status).toBe(404);
    expect(await countRows(activities, eq(activities.id, activityId))).toBe(1);
  });
});
