import { SAMPLES_DIR } from "../files/testing/samples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { and, eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { Decoder, Stream } from "@garmin/fitsdk";
import { setupApi } from "../testing/fixtures";
import { sendEndlessBody } from "../testing/endless-body";
import { sessionCookieFor } from "../auth/test-session";
import { countRows } from "../testing/rows";
import { expectWireShape } from "../testing/wire-shape";
import { activities, activityLaps, activityStreams, athleteProfiles, events, uploadFiles, uploads } from "../db/schema";
import { Activity } from "../activities/schemas";
import { localDateTimeIn } from "../time/local";
import { Upload } from "./schemas";
import { claimUploads, MAX_UPLOAD_ATTEMPTS, MAX_UPLOAD_CLAIMS } from "./claim-uploads";
import { BUSY_DELAY_S, parseStoredFile, processUpload } from "./process-upload";
import { failUpload, lockFile, saveParsedActivities } from "./save-parsed-activities";
import { buildFit, rideRecords } from "../files/testing/fit-files";
import { inTransaction } from "../db/transaction";
import { rowsOf } from "../db/client";
import { uploadBodyBudget } from "./body-budget";
import { readUploadedFile, storeUploadFile, UPLOAD_FILE_CHUNK_BYTES } from "./file-chunks";
import { startUploadProcessor, type UploadProcessor } from "./local-processor";
import { closeFileWorkers, DEFAULT_POOL_OPTIONS, fileWorkerIsFree, FileWorkerError, FileWorkerStoppedError, prepareUploadOffThread, runOnSharedPool } from "../files/worker/pool";
import { prepareUpload } from "../files/worker/run-task";
import { beginEarlyParse, earlyBytesKept, earlyParsesKept, EARLY_MAX_BYTES, EARLY_MAX_KEPT_BYTES, takeEarlyParse } from "./early-parse";

const api = setupApi();
const SAMPLES = SAMPLES_DIR;
const TZ = "America/New_York";

let processor: UploadProcessor;
beforeAll(() => {
  processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
});
afterAll(async () => {
  await processor.stop();
});

type UploadWire = ReturnType<typeof Upload.parse>;
type Part = { name: string; value: string } | { name: string; file: Uint8Array; fileName?: string };

function sample(rel: string): Buffer {
  return readFileSync(path.join(SAMPLES, rel));
}

function form(parts: Part[]): FormData {
  const f = new FormData();
  for (const p of parts) {
    if ("value" in p) f.append(p.name, p.value);
    else f.append(p.name, new Blob([new Uint8Array(p.file)]), p.fileName ?? "file.bin");
  }
  return f;
}

async function post(token: string | null, body: FormData | string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}, url = "/v1/athletes/me/uploads"): Promise<Response> {
  const res = await fetch(api.url + url, {
    method: "POST",
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
  await expectWireShape("POST", url, res);
  return res;
}

/** Sends a file and expects the 202 with its Location. */
async function send(token: string, bytes: Uint8Array, fileName: string, fields: Record<string, string> = {}): Promise<UploadWire> {
  const res = await post(token, form([{ name: "file", file: bytes, fileName }, ...Object.entries(fields).map(([name, value]) => ({ name, value }))]));
  expect(res.status, await res.clone().text()).toBe(202);
  const upload = Upload.parse(await res.json());
  expect(res.headers.get("location")).toBe(`/v1/uploads/${upload.id}`);
  return upload;
}

async function get(token: string, id: string): Promise<Response> {
  const res = await api.call(token, "GET", `/v1/uploads/${id}`);
  return res;
}

/** The upload once the processor has looked at everything waiting (a signal, not a sleep). */
async function settled(token: string, id: string): Promise<UploadWire> {
  for (let i = 0; i < 50; i++) {
    await processor.idle();
    const res = await get(token, id);
    expect(res.status).toBe(200);
    const u = Upload.parse(await res.json());
    if (u.status !== "processing") return u;
  }
  throw new Error(`upload ${id} still processing`);
}

async function activity(token: string, id: string) {
  const res = await api.call(token, "GET", `/v1/activities/${id}`);
  expect(res.status).toBe(200);
  return Activity.parse(await res.json());
}

async function athlete(scopes?: Parameters<typeof api.pat>[1]) {
  const person = await api.person({ timezone: TZ });
  return { ...person, token: await api.pat(person.id, scopes) };
}

async function activitiesOf(athleteId: string): Promise<number> {
  return countRows(activities, eq(activities.athleteId, athleteId));
}

// What the files say, read independently of the service's parser (CONTRACT §11's mapping).
const FIT_SPORT: Record<string, string> = { running: "run", cycling: "ride", swimming: "swim", walking: "walk", hiking: "hike", rowing: "row" };
function fitSport(sport: string | undefined, subSport: string | undefined): string {
  if (sport === "running" && subSport === "trail") return "trail_run";
  if (sport === "cycling" && (subSport === "indoorCycling" || subSport === "virtualActivity")) return "virtual_ride";
  if (subSport === "indoorRowing") return "row";
  if (subSport === "strengthTraining" && sport === "training") return "strength";
  if (subSport === "yoga") return "yoga";
  if (sport && /skiing/i.test(sport)) return "ski";
  return FIT_SPORT[sport ?? ""] ?? "other";
}

type FitSession = { startTime: Date; totalElapsedTime?: number; sport?: string; subSport?: string };
function fitFacts(bytes: Uint8Array) {
  const { messages } = new Decoder(Stream.fromByteArray(Array.from(bytes))).read();
  const sessions = (messages.sessionMesgs ?? []) as FitSession[];
  const records = (messages.recordMesgs ?? []) as { timestamp?: Date }[];
  return { sessions, firstRecord: records.find((r) => r.timestamp)?.timestamp };
}

function xmlFacts(text: string, kind: "gpx" | "tcx") {
  const time = kind === "gpx" ? /<trkpt\b[\s\S]*?<time>([^<]+)<\/time>/.exec(text) : /<Trackpoint>\s*<Time>([^<]+)<\/Time>/.exec(text);
  let sport = "other";
  if (kind === "tcx") {
    const s = /<Activity Sport="(\w+)"/.exec(text)?.[1];
    sport = s === "Running" ? "run" : s === "Biking" ? "ride" : "other";
  } else {
    const t = /<trk>[\s\S]*?<type>([^<]+)<\/type>/.exec(text)?.[1]?.trim().toLowerCase();
    const map: Record<string, string> = { running: "run", run: "run", "9": "run", cycling: "ride", biking: "ride", ride: "ride", "1": "ride", hiking: "hike", "4": "hike", walking: "walk", "10": "walk", swimming: "swim" };
    sport = (t && map[t]) ?? "other";
  }
  // One activity per GPX track, or per TCX activity, that has a timed point.
  const opener = kind === "gpx" ? /<trk[\s>]/ : /<Activity[\s>]/;
  const closer = kind === "gpx" ? "</trk>" : "</Activity>";
  const timed = kind === "gpx" ? /<trkpt\b[\s\S]*?<time>/ : /<Trackpoint>\s*<Time>/;
  const activities = text
    .split(opener)
    .slice(1)
    .filter((part) => timed.test(part.split(closer)[0]!)).length;
  return { start: time ? new Date(time[1]!) : undefined, sport, activities };
}

describe("every sample file goes through POST → poll (CONTRACT §11)", () => {
  const files = ["fit", "gpx", "tcx", "other"].flatMap((dir) => readdirSync(path.join(SAMPLES, dir)).map((f) => `${dir}/${f}`));

  for (const rel of files) {
    it(rel, async () => {
      const a = await athlete(["activities.read", "activities.write"]);
      const bytes = sample(rel);
      const up = await send(a.token, bytes, path.basename(rel));
      expect(up).toMatchObject({ status: "processing", activity_id: null, activity_ids: [], error: null, file_name: path.basename(rel), external_id: null });
      expect(up.data_type).toBe(rel.startsWith("other/") ? "fit" : rel.slice(0, 3));
      const done = await settled(a.token, up.id);

      if (rel.startsWith("other/") || rel === "gpx/empty_trk.gpx") {
        expect(done).toMatchObject({ status: "failed", activity_id: null, activity_ids: [], error: { code: "no_activity_data" } });
        expect(done.error!.detail.length).toBeGreaterThan(0);
        expect(await activitiesOf(a.id)).toBe(0);
        return;
      }
      if (rel === "fit/strava-android-app-201.10-b1218918.fit") {
        // A recording that crashed: its header promises 17 bytes more than the file holds.
        expect(done).toMatchObject({ status: "failed", activity_ids: [], error: { code: "invalid_file" } });
        expect(done.error!.detail).toMatch(/cut off/);
        expect(await activitiesOf(a.id)).toBe(0);
        return;
      }
      if (rel === "tcx/bad.tcx" && done.status === "failed") {
        // Well-formed XML with unreadable coordinates: either outcome is a file's, never a 5xx.
        expect(done.error?.code).toBe("invalid_file");
        expect(await activitiesOf(a.id)).toBe(0);
        return;
      }
      expect(done.error, JSON.stringify(done.error)).toBeNull();
      expect(done.status).toBe("succeeded");
      expect(done.activity_ids.length).toBeGreaterThan(0);
      expect(done.activity_id).toBe(done.activity_ids[0]);
      expect(await activitiesOf(a.id)).toBe(done.activity_ids.length);
      const first = await activity(a.token, done.activity_ids[0]!);
      expect(first).toMatchObject({ athlete_id: a.id, source: "upload" });
      expect(first.elapsed_time_s).toBeGreaterThan(0);

      if (rel.startsWith("fit/")) {
        const facts = fitFacts(bytes);
        if (facts.sessions.length) {
          expect(done.activity_ids).toHaveLength(facts.sessions.length);
          const s = facts.sessions[0]!;
          expect(first.start_local).toBe(localDateTimeIn(TZ, s.startTime));
          expect(first.sport_type).toBe(fitSport(s.sport, s.subSport));
          if (s.totalElapsedTime != null) expect(Math.abs(first.elapsed_time_s - s.totalElapsedTime)).toBeLessThanOrEqual(1);
        } else {
          expect(first.start_local).toBe(localDateTimeIn(TZ, facts.firstRecord!));
        }
      } else {
        const facts = xmlFacts(bytes.toString("utf8"), rel.slice(0, 3) as "gpx" | "tcx");
        expect(done.activity_ids).toHaveLength(facts.activities);
        expect(first.start_local).toBe(localDateTimeIn(TZ, facts.start!));
        expect(first.sport_type).toBe(facts.sport);
      }
      // Each activity has its streams and its laps, and announced itself.
      for (const id of done.activity_ids) {
        expect(await countRows(activityStreams, eq(activityStreams.activityId, id))).toBe(1);
        expect(await countRows(activityLaps, eq(activityLaps.activityId, id))).toBeGreaterThan(0);
        expect(await countRows(events, and(eq(events.objectId, id), eq(events.type, "activity.created")))).toBe(1);
      }
    });
  }
});

describe("POST /v1/athletes/me/uploads", () => {
  it("takes a gzip-compressed file, recognised by its content whatever its name, and keeps the bytes as received", async () => {
    const a = await athlete();
    const gz = gzipSync(sample("fit/activity-small-fenix2-run.fit"));
    const up = await send(a.token, gz, "export.bin");
    expect(up.data_type).toBe("fit");
    const done = await settled(a.token, up.id);
    expect(done.status).toBe("succeeded");
    const [stored] = await (await api.db()).select().from(uploadFiles).where(eq(uploadFiles.uploadId, up.id));
    expect(Buffer.from(stored!.bytes).equals(gz)).toBe(true);
  });

  it("exports the instant the file recorded: in the repeated hour of a change from summer time, and after the athlete's timezone changes", async () => {
    // 05:30Z on 3 November 2024 is 01:30 in New York, summer time; 06:30Z is 01:30 again, in winter time.
    const a = await athlete();
    const pts = [0, 60, 120].map((s, i) => `<trkpt lat="40.7${i}" lon="-74.0"><time>${new Date(Date.UTC(2024, 10, 3, 5, 30) + s * 1000).toISOString()}</time></trkpt>`);
    const gpx = Buffer.from(`<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>${pts.join("")}</trkseg></trk></gpx>`);
    const done = await settled(a.token, (await send(a.token, gpx, "dst.gpx")).id);
    expect(done.status).toBe("succeeded");
    const firstTime = async () => {
      const res = await api.call(a.token, "GET", `/v1/activities/${done.activity_id}/export?format=gpx`);
      expect(res.status, await res.clone().text()).toBe(200);
      return /<trkpt[^>]*>.*?<time>([^<]+)<\/time>/s.exec(await res.text())![1];
    };
    expect(await firstTime()).toBe("2024-11-03T05:30:00Z");
    await (await api.db()).update(athleteProfiles).set({ timezone: "Europe/Berlin" }).where(eq(athleteProfiles.userId, a.id));
    expect(await firstTime()).toBe("2024-11-03T05:30:00Z");
    // A change that sends the start back as it was (an app writing the whole activity back) moves nothing.
    const activity = await (await api.call(a.token, "GET", `/v1/activities/${done.activity_id}`)).json();
    expect(activity.start_local).toBe("2024-11-03T01:30:00");
    const renamed = await api.call(a.token, "PATCH", `/v1/activities/${done.activity_id}`, { body: { name: "Renamed", start_local: activity.start_local } });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
    expect(await firstTime()).toBe("2024-11-03T05:30:00Z");
    // A start moved by hand is a wall-clock time in the athlete's timezone, as a hand-recorded one is:
    // 08:00 on 1 July in Berlin is 06:00Z (summer time), whatever offset the file had.
    const moved = await api.call(a.token, "PATCH", `/v1/activities/${done.activity_id}`, { body: { start_local: "2025-07-01T08:00:00" } });
    expect(moved.status, await moved.clone().text()).toBe(200);
    expect(await firstTime()).toBe("2025-07-01T06:00:00Z");
  });

  it("keeps the file's name without its folders and without control, bidi or zero-width characters", async () => {
    const a = await athlete();
    const bytes = sample("fit/activity-small-fenix2-run.fit");
    const cases: [string, string | null][] = [
      ["C:\\Users\\ava\\ride.fit", "ride.fit"],
      // U+202E would make the rest read backwards: "ride\u202etif.exe" shows as "rideexe.fit".
      ["ride\u202etif.exe", "ridetif.exe"],
      ["ri\u200bde\u2066.fit", "ride.fit"],
      ["\u202e\u200b", null],
      [`${"🏃".repeat(300)}.fit`, "🏃".repeat(255)],
    ];
    for (const [given, kept] of cases) {
      const up = await send(a.token, bytes, given);
      expect(up.file_name, given).toBe(kept);
      await api.call(a.token, "DELETE", `/v1/activities/${(await settled(a.token, up.id)).activity_id}`);
    }
  });

  it("keeps a file larger than one stored chunk byte for byte, in rows of at most a chunk each", async () => {
    const a = await athlete();
    const bytes = Buffer.concat([Buffer.from('<?xml version="1.0"?><gpx version="1.1">'), randomBytes(9 * 1024 * 1024 + 7)]);
    const up = await send(a.token, bytes, "noise.gpx");
    const db = await api.db();
    const rows = await db
      .select({ chunk: uploadFiles.chunk, length: sql<number>`octet_length(${uploadFiles.bytes})`.mapWith(Number) })
      .from(uploadFiles)
      .where(eq(uploadFiles.uploadId, up.id))
      .orderBy(uploadFiles.chunk);
    const chunks = Math.ceil(bytes.byteLength / UPLOAD_FILE_CHUNK_BYTES);
    expect(rows.map((r) => r.chunk)).toEqual([...Array(chunks).keys()]);
    expect(rows.slice(0, -1).every((r) => r.length === UPLOAD_FILE_CHUNK_BYTES)).toBe(true);
    expect(Buffer.from((await readUploadedFile(db, up.id))!.bytes).equals(bytes)).toBe(true);
    expect((await settled(a.token, up.id)).error?.code).toBe("invalid_file");
  });

  it("lets the event loop turn between a file's chunks, written and read (the embedded database runs on this thread)", async () => {
    // One value of the whole file, grown by appends, held the thread for 1.6 s at a stretch on
    // PGlite (a 19 MB file): no timer fired meanwhile, webhook deliveries' timeouts among them.
    const a = await athlete();
    const bytes = Buffer.concat([Buffer.from('<?xml version="1.0"?><gpx version="1.1">'), randomBytes(4 * UPLOAD_FILE_CHUNK_BYTES)]);
    const db = await api.db();
    const turns = async (work: () => Promise<unknown>) => {
      let n = 0;
      let more = true;
      const tick = () => {
        n++;
        if (more) setImmediate(tick);
      };
      setImmediate(tick);
      await work();
      more = false;
      return n;
    };
    // The upload's row, and then its file stored again as the upload stores it.
    const { id } = await send(a.token, bytes.subarray(0, 100), "noise.gpx");
    await settled(a.token, id);
    await db.delete(uploadFiles).where(eq(uploadFiles.uploadId, id));
    const writing = await turns(() => storeUploadFile(db, id, bytes));
    const reading = await turns(() => readUploadedFile(db, id));
    // Five chunks: at least one turn between each two.
    expect(writing).toBeGreaterThanOrEqual(4);
    expect(reading).toBeGreaterThanOrEqual(4);
    expect(Buffer.from((await readUploadedFile(db, id))!.bytes).equals(bytes)).toBe(true);
  });

  it("saves every lap of a file with more laps than one statement's parameters hold (6,000 laps of 12 values)", async () => {
    // 12 values a lap: one multi-row insert stopped at 5,461 laps (65,534 parameters), and the
    // upload failed after three attempts as one that could not be processed.
    const a = await athlete();
    const laps = Array.from({ length: 6_000 }, (_, i) => ({ start: i, elapsed: 1, distance: 8 }));
    const bytes = buildFit([{ sport: "cycling", start: 0, elapsed: 6_000, records: rideRecords(0, 6_000), laps }]);
    const done = await settled(a.token, (await send(a.token, bytes, "laps.fit")).id);
    expect({ status: done.status, error: done.error }).toEqual({ status: "succeeded", error: null });
    const answer = (await (await api.call(a.token, "GET", `/v1/activities/${done.activity_id}/laps`)).json()) as { data: { index: number; start_offset_s: number }[] };
    expect(answer.data.length).toBe(6_000);
    expect(answer.data.at(-1)).toMatchObject({ index: 5_999, start_offset_s: 5_999 });
  });

  it("waits for room in the process's upload memory before reading a body, and goes on once there is", async () => {
    const a = await athlete();
    const budget = uploadBodyBudget();
    const all = (await budget.reserve(budget.total, 1_000))!;
    try {
      const answer = post(a.token, form([{ name: "file", file: sample("gpx/run.gpx"), fileName: "run.gpx" }]));
      // The request is queued, not refused, and holds nothing of the budget meanwhile.
      await expect.poll(() => budget.waiting).toBe(1);
      expect(budget.available).toBe(0);
      all.release();
      const res = await answer;
      expect(res.status).toBe(202);
      expect((await settled(a.token, Upload.parse(await res.json()).id)).status).toBe("succeeded");
    } finally {
      all.release();
    }
    // Every body's memory is given back once it is answered.
    expect(budget.available).toBe(budget.total);
  });

  it("takes a stalled body's room for the uploads waiting behind it (503, nothing kept), and the one waiting goes on", { timeout: 40_000 }, async () => {
    const a = await athlete();
    const budget = uploadBodyBudget();
    const before = await countRows(uploads, eq(uploads.athleteId, a.id));
    // A real connection that declares 20 MiB, sends the start of its file, then stops sending.
    const boundary = "stalled-boundary";
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ride.fit"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const stalled = request(api.url + "/v1/athletes/me/uploads", {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(20 * 1024 * 1024) },
    });
    const answered = new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
      stalled.on("response", (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, retryAfter: res.headers["retry-after"] as string | undefined, body }));
      });
      stalled.on("error", reject);
    });
    stalled.write(Buffer.concat([head, randomBytes(64 * 1024)]));
    try {
      await expect.poll(() => budget.available, { timeout: 5_000 }).toBeLessThan(budget.total);
      // Someone needs the room it holds: the stalled body gives it up within a window (10 s).
      const waiting = budget.reserve(budget.total, 30_000);
      const res = await answered;
      expect(res.status, res.body).toBe(503);
      expect(res.retryAfter).toBe("5");
      expect(JSON.parse(res.body)).toMatchObject({ code: "service_unavailable", detail: expect.stringContaining("too slowly") });
      const room = await waiting;
      expect(room).not.toBeNull();
      room!.release();
    } finally {
      stalled.destroy();
    }
    expect(await countRows(uploads, eq(uploads.athleteId, a.id))).toBe(before);
    expect(budget.available).toBe(budget.total);
  });

  it("names the activity from the `name` field and takes `sport_type` over the file's", async () => {
    const a = await athlete();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx", { name: "Hill repeats", sport_type: "trail_run" });
    const done = await settled(a.token, up.id);
    const act = await activity(a.token, done.activity_id!);
    expect(act).toMatchObject({ name: "Hill repeats", sport_type: "trail_run" });
  });

  it("refuses what is not FIT, GPX or TCX with 400 unsupported_file_type, and records nothing", async () => {
    const a = await athlete();
    const before = await countRows(uploads);
    for (const bytes of [Buffer.from("\x89PNG\r\n\x1a\n not an activity"), Buffer.from("<?xml version='1.0'?><kml></kml>"), Buffer.from("")]) {
      const res = await post(a.token, form([{ name: "file", file: bytes, fileName: "run.fit" }]));
      expect(res.status).toBe(400);
      // The detail says what is wrong once, in words a person reads on the upload page.
      expect(await res.json()).toMatchObject({ code: "unsupported_file_type", detail: "The file is not a FIT, GPX or TCX file (optionally gzip-compressed)." });
    }
    expect(await countRows(uploads)).toBe(before);
  });

  it("answers a body far past the limit with its 413 as soon as it is known, declared or streamed, and reads no further than a bound", { timeout: 60_000 }, async () => {
    const a = await athlete();
    const before = await countRows(uploads);
    const boundary = "far-too-large";
    const first = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.gpx"\r\nContent-Type: application/gpx+xml\r\n\r\n<gpx>`);
    const headers = { authorization: `Bearer ${a.token}`, "content-type": `multipart/form-data; boundary=${boundary}` };
    // Declared as 200 MiB, and streamed without a length: each gets its problem when the limit
    // is known (the declared length, or the first byte past 25 MiB), not after more is read, and
    // the server stops reading (the rest is taken only while the answer goes out, to a bound).
    for (const contentLength of [200 * 1024 * 1024, undefined]) {
      const result = await sendEndlessBody(api.url + "/v1/athletes/me/uploads", { headers, first, giveUpBytes: 200 * 1024 * 1024, contentLength });
      expect(result, `Content-Length ${contentLength}`).toMatchObject({ closed: false, status: 413 });
      expect(JSON.parse(result.body!)).toMatchObject({ code: "payload_too_large" });
      // The limit, and what the sockets' buffers hold (a few MiB on loopback); the answer used to
      // wait until twice the limit had been read.
      expect(result.sent, "answered only after reading on").toBeLessThan((contentLength ? 16 : 25 + 16) * 1024 * 1024);
    }
    expect(await countRows(uploads)).toBe(before);
  });

  it("refuses a file over 25 MiB with 413, and a small gzip that decompresses past it", async () => {
    const a = await athlete();
    const before = await countRows(uploads);
    const big = Buffer.alloc(25 * 1024 * 1024 + 1, 0x20);
    sample("gpx/run.gpx").copy(big, 0, 0, 200);
    const res = await post(a.token, form([{ name: "file", file: big, fileName: "big.gpx" }]));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "payload_too_large" });

    // Declared past the limit by Content-Length: refused before busboy reads a byte of it.
    const declared = await post(a.token, form([{ name: "file", file: Buffer.alloc(26 * 1024 * 1024, 0x20), fileName: "huge.gpx" }]));
    expect(declared.status).toBe(413);

    const head = Buffer.from('<?xml version="1.0"?><gpx version="1.1"><trk><trkseg>');
    const bomb = gzipSync(Buffer.concat([head, Buffer.alloc(26 * 1024 * 1024, 0x20), Buffer.from("</trkseg></trk></gpx>")]));
    expect(bomb.byteLength).toBeLessThan(1024 * 1024);
    const res2 = await post(a.token, form([{ name: "file", file: bomb, fileName: "bomb.gpx.gz" }]));
    expect(res2.status).toBe(413);
    expect(await res2.json()).toMatchObject({
      code: "payload_too_large",
      detail: "The file is larger than 25 MiB once decompressed. Files are limited to 26214400 bytes (25 MiB), decompressed too.",
    });
    expect(await countRows(uploads)).toBe(before);
  });

  it("a gzip whose root follows a megabyte of comment is taken, or refused, as it would be with a short prolog (detect.test.ts: such a prolog is read in the file worker)", async () => {
    const a = await athlete();
    const comment = `<?xml version="1.0" encoding="UTF-8"?><!--${" ".repeat(1024 * 1024)}-->`;
    const gpx = sample("gpx/run.gpx").toString("utf8").replace(/^<\?xml[^>]*\?>/, comment);
    const up = await send(a.token, gzipSync(gpx), "run.gpx.gz");
    expect(up).toMatchObject({ data_type: "gpx" });
    expect(await settled(a.token, up.id)).toMatchObject({ status: "succeeded" });
    const before = await countRows(uploads);
    const res = await post(a.token, form([{ name: "file", file: gzipSync(`${comment}<kml/>`), fileName: "x.gz" }]));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "unsupported_file_type" });
    expect(await countRows(uploads)).toBe(before);
  });

  it("refuses malformed forms with 400 naming the problem: no file, two files, unknown parts and fields, bad values, not multipart", async () => {
    const a = await athlete();
    const gpx = sample("gpx/run.gpx");
    const before = await countRows(uploads);
    const cases: [FormData | string, Record<string, string>, string, string][] = [
      [form([{ name: "name", value: "x" }]), {}, "invalid_request", "file"],
      [form([{ name: "file", file: gpx }, { name: "file", file: gpx }]), {}, "invalid_request", "file"],
      [form([{ name: "file", file: gpx }, { name: "other", file: gpx }]), {}, "invalid_request", "other"],
      [form([{ name: "file", file: gpx }, { name: "colour", value: "red" }]), {}, "invalid_request", "colour"],
      [form([{ name: "file", file: gpx }, { name: "sport_type", value: "curling" }]), {}, "invalid_enum_value", "sport_type"],
      [form([{ name: "file", file: gpx }, { name: "external_id", value: "x".repeat(256) }]), {}, "invalid_request", "external_id"],
      [form([{ name: "file", file: gpx }, { name: "name", value: "a" }, { name: "name", value: "b" }]), {}, "invalid_request", "name"],
      [JSON.stringify({ file: "x" }), { "content-type": "application/json" }, "invalid_request", "body"],
      ["--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nabc", { "content-type": "multipart/form-data; boundary=b" }, "invalid_request", "body"],
    ];
    for (const [body, headers, code, field] of cases) {
      const res = await post(a.token, body, headers);
      const problem = (await res.json()) as { code: string; errors?: { field: string }[] };
      expect(res.status, JSON.stringify(problem)).toBe(400);
      expect(problem.code, JSON.stringify(problem)).toBe(code);
      expect(problem.errors?.map((e) => e.field.replace(/^body\./, "")), JSON.stringify(problem)).toContain(field);
    }
    expect(await countRows(uploads)).toBe(before);

    // Text fields that are not UTF-8 ("Løp" in Latin-1, a binary external_id) are refused, not kept with U+FFFD in them.
    for (const [field, bytes] of [
      ["name", "4cf870"],
      ["external_id", "61ff62"],
    ] as const) {
      const body = Buffer.concat([
        Buffer.from(`--b\r\nContent-Disposition: form-data; name="file"; filename="run.gpx"\r\n\r\n`),
        gpx,
        Buffer.from(`\r\n--b\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n`),
        Buffer.from(bytes, "hex"),
        Buffer.from("\r\n--b--\r\n"),
      ]);
      const res = await post(a.token, new Uint8Array(body), { "content-type": "multipart/form-data; boundary=b" });
      expect(res.status, field).toBe(400);
      expect(await res.json()).toMatchObject({ code: "invalid_request", detail: `The field \`${field}\` is not valid UTF-8.`, errors: [{ field: expect.stringContaining(field) }] });
    }
    expect(await countRows(uploads)).toBe(before);

    // A file part without a name is named as such, not as `undefined`.
    const nameless = await post(a.token, '--b\r\nContent-Disposition: form-data; filename="a.gpx"\r\n\r\n<gpx/>\r\n--b--\r\n', { "content-type": "multipart/form-data; boundary=b" });
    expect(nameless.status).toBe(400);
    expect(await nameless.json()).toMatchObject({ code: "invalid_request", detail: "A file part without a name: the file goes in the `file` part." });
    expect(await countRows(uploads)).toBe(before);
  });

  it("cuts a file's long activity name at 200 characters, counted as the API counts them (code points): an emoji is one, never cut in half (a stored U+FFFD)", async () => {
    const a = await athlete();
    const long = `${"a".repeat(199)}🏃bbbbb`;
    const gpx = Buffer.from(sample("gpx/run.gpx").toString("utf8").replace("<name>Untitled</name>", `<name>${long}</name>`));
    const done = await settled(a.token, (await send(a.token, gpx, "long.gpx")).id);
    expect(done.status).toBe("succeeded");
    expect((await activity(a.token, done.activity_id!)).name).toBe(`${"a".repeat(199)}🏃`);
  });

  it("takes a `file` part sent without a filename (as `curl -F 'file=<ride.fit'` sends it), its bytes as they came", async () => {
    const a = await athlete();
    const fit = sample("fit/garmin-edge-500-activity.fit");
    const body = Buffer.concat([Buffer.from('--b\r\nContent-Disposition: form-data; name="file"\r\n\r\n'), fit, Buffer.from("\r\n--b--\r\n")]);
    const res = await post(a.token, body, { "content-type": "multipart/form-data; boundary=b" });
    expect(res.status, await res.clone().text()).toBe(202);
    const up = Upload.parse(await res.json());
    expect(up).toMatchObject({ data_type: "fit" });
    const done = await settled(a.token, up.id);
    expect(done).toMatchObject({ status: "succeeded" });
    const original = await api.call(a.token, "GET", `/v1/activities/${done.activity_id}/export?format=original`);
    expect(Buffer.from(await original.arrayBuffer()).equals(fit)).toBe(true);
  });

  it("needs activities.write (403 insufficient_scope) and a token (401), and writes only for `me`", async () => {
    const a = await athlete(["activities.read"]);
    const gpx = sample("gpx/run.gpx");
    const res = await post(a.token, form([{ name: "file", file: gpx }]));
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain('scope="activities.write"');
    expect(await res.json()).toMatchObject({ code: "insufficient_scope" });
    expect((await post(null, form([{ name: "file", file: gpx }]))).status).toBe(401);
    const b = await athlete();
    const other = await post(b.token, form([{ name: "file", file: gpx }]), {}, `/v1/athletes/${a.id}/uploads`);
    expect(other.status).toBe(403);
    expect(await countRows(uploads, eq(uploads.athleteId, a.id))).toBe(0);
  });

  it("answers a repeated external_id with the first upload as it stands, and 409 for other bytes", async () => {
    const a = await athlete();
    const first = await send(a.token, sample("gpx/run.gpx"), "run.gpx", { external_id: "watch-42" });
    const done = await settled(a.token, first.id);
    expect(done.status).toBe("succeeded");
    const again = await send(a.token, sample("gpx/run.gpx"), "run.gpx", { external_id: "watch-42" });
    expect(again).toStrictEqual(done);
    const conflict = await post(a.token, form([{ name: "file", file: sample("gpx/missing_hr.gpx") }, { name: "external_id", value: "watch-42" }]));
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ code: "conflict" });
    expect(await countRows(uploads, eq(uploads.athleteId, a.id))).toBe(1);
    // Another athlete's external_id is theirs alone.
    const b = await athlete();
    const theirs = await send(b.token, sample("gpx/missing_hr.gpx"), "x.gpx", { external_id: "watch-42" });
    expect(theirs.id).not.toBe(first.id);
  });

  it("accepts Idempotency-Key: the same key and file replay the answer, the same key with another file is 422", async () => {
    const a = await athlete();
    const body = () => form([{ name: "file", file: sample("gpx/run.gpx"), fileName: "run.gpx" }]);
    const first = await post(a.token, body(), { "idempotency-key": "k-1" });
    expect(first.status).toBe(202);
    const replay = await post(a.token, body(), { "idempotency-key": "k-1" });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const up = Upload.parse(await first.json());
    expect(Upload.parse(await replay.json()).id).toBe(up.id);
    expect(replay.headers.get("location")).toBe(`/v1/uploads/${up.id}`);
    const other = await post(a.token, form([{ name: "file", file: sample("gpx/missing_hr.gpx"), fileName: "run.gpx" }]), { "idempotency-key": "k-1" });
    expect(other.status).toBe(422);
    // The same bytes under another name: another request (the upload keeps its file_name).
    const renamed = await post(a.token, form([{ name: "file", file: sample("gpx/run.gpx"), fileName: "evening.gpx" }]), { "idempotency-key": "k-1" });
    expect(renamed.status).toBe(422);
    expect(await countRows(uploads, eq(uploads.athleteId, a.id))).toBe(1);
    await settled(a.token, up.id);
  });

  it("takes the same external_id sent twice at once as one upload", async () => {
    const a = await athlete();
    const bytes = sample("fit/garmin-edge-820-bike.fit");
    const [x, y] = await Promise.all([0, 1].map(() => send(a.token, bytes, "a.fit", { external_id: "race" })));
    expect(x!.id).toBe(y!.id);
    expect(await countRows(uploads, eq(uploads.athleteId, a.id))).toBe(1);
  });
});

/** The bytes with a run in the middle overwritten, so the data no longer inflates. */
function corruptMiddle(bytes: Uint8Array): Uint8Array {
  const out = Buffer.from(bytes);
  out.fill(0xff, Math.floor(out.length / 2), Math.floor(out.length / 2) + 64);
  return out;
}

/** How many chunks of an upload's file are stored. */
async function storedChunks(uploadId: string): Promise<number> {
  return (await (await api.db()).select({ chunk: uploadFiles.chunk }).from(uploadFiles).where(eq(uploadFiles.uploadId, uploadId))).length;
}

describe("processing failures end as failed uploads, never 5xx, never an activity (CONTRACT §11)", () => {
  const fit = sample("fit/activity-small-fenix2-run.fit");
  const gpx = sample("gpx/run.gpx").toString("utf8");
  const cases: [string, Uint8Array, string, "invalid_file" | "no_activity_data"][] = [
    ["a truncated FIT file", fit.subarray(0, Math.floor(fit.length / 2)), "cut.fit", "invalid_file"],
    ["a FIT file with a wrong CRC", Buffer.concat([fit.subarray(0, fit.length - 2), Buffer.from([fit[fit.length - 2]! ^ 0xff, fit[fit.length - 1]! ^ 0xff])]), "crc.fit", "invalid_file"],
    ["cut XML", Buffer.from(gpx.slice(0, Math.floor(gpx.length / 2))), "cut.gpx", "invalid_file"],
    // Damaged gzip around a file of a kind the service reads is a damaged file of that kind, as
    // without gzip: taken, then failed (once it was refused with 400 unsupported_file_type).
    ["a gzip-compressed GPX file cut off", gzipSync(Buffer.from(gpx)).subarray(0, 2000), "cut.gpx.gz", "invalid_file"],
    ["a gzip-compressed FIT file corrupt in the middle", corruptMiddle(gzipSync(fit)), "bad.fit.gz", "invalid_file"],
    ["a FIT settings file", sample("other/WeightScaleSingleUser.fit"), "w.fit", "no_activity_data"],
    // Every record dated decades ahead (a device clock gone wrong): refused as the parse reads
    // it, in words naming the dates; once it became an activity without a start, whose save
    // threw on every attempt until the upload failed as one that could not be processed.
    ["a FIT file whose every record is dated decades ahead", buildFit([{ sport: "running", start: 20 * 365 * 86_400, elapsed: 60, records: rideRecords(20 * 365 * 86_400, 60) }]), "ahead.fit", "invalid_file"],
    // The parser's message quotes the tag, NUL included, which PostgreSQL text cannot hold: once
    // it made the failure's own write fail, and the upload was retried as an unexpected error.
    ["XML whose broken tag holds a NUL", Buffer.from(gpx.replace("<trkseg>", "<trk\u0000seg>")), "nul.gpx", "invalid_file"],
  ];
  for (const [what, bytes, name, code] of cases) {
    it(what, async () => {
      const a = await athlete();
      const up = await send(a.token, bytes, name);
      const done = await settled(a.token, up.id);
      expect(done).toMatchObject({ status: "failed", activity_id: null, activity_ids: [], error: { code } });
      expect(done.error!.detail).not.toMatch(/undefined|\[object|attempts failed/);
      expect(done.error!.detail).not.toMatch(/\p{Cc}/u);
      expect(await activitiesOf(a.id)).toBe(0);
      // Nothing will read the file of an upload that made no activity: it is not kept.
      expect(await storedChunks(up.id)).toBe(0);
    });
  }

  it("a parsed activity without a valid start instant fails the upload as invalid_file at once, not after retries", async () => {
    await processor.stop();
    try {
      const a = await athlete();
      const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
      const db = await api.db();
      const [row] = await db.select().from(uploads).where(eq(uploads.id, up.id));
      const [parsed] = prepareUpload(sample("gpx/run.gpx"), "gpx");
      const outcome = await inTransaction(db, (tx) => saveParsedActivities(tx, row!, [{ ...parsed!, startTime: new Date(Number.NaN) }]));
      expect(outcome).toBe("failed");
      const done = Upload.parse(await (await get(a.token, up.id)).json());
      expect(done).toMatchObject({ status: "failed", activity_ids: [], error: { code: "invalid_file" } });
      expect(done.error!.detail).toMatch(/start time/);
      expect(await activitiesOf(a.id)).toBe(0);
    } finally {
      processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
    }
  });

  it("the same file bytes again (even gzip-compressed) fail as duplicate_activity naming the existing activity, until it is deleted", async () => {
    const a = await athlete();
    const bytes = sample("tcx/sample.tcx");
    const first = await settled(a.token, (await send(a.token, bytes, "a.tcx")).id);
    expect(first.status).toBe("succeeded");
    const second = await settled(a.token, (await send(a.token, gzipSync(bytes), "b.tcx.gz")).id);
    expect(second).toMatchObject({ status: "failed", activity_id: first.activity_id, activity_ids: [], error: { code: "duplicate_activity" } });
    expect(await activitiesOf(a.id)).toBe(1);
    // The duplicate's copy of the file is let go; the first upload's is kept for export.
    expect(await storedChunks(second.id)).toBe(0);
    expect(await storedChunks(first.id)).toBe(1);
    // Another athlete's identical file is not a duplicate.
    const b = await athlete();
    expect((await settled(b.token, (await send(b.token, bytes, "a.tcx")).id)).status).toBe("succeeded");
    // Once the activity is gone the file can come again.
    await (await api.db()).delete(activities).where(eq(activities.id, first.activity_id!));
    expect((await settled(a.token, (await send(a.token, bytes, "a.tcx")).id)).status).toBe("succeeded");
  });
});

describe("a multisport file uploaded again", () => {
  it("names its first leg as the duplicate and every leg still there in its detail, until all are deleted", async () => {
    const a = await athlete();
    const legs = [0, 1, 2].map((i) => ({ sport: i === 1 ? "cycling" : "running", start: i * 700, elapsed: 600, records: rideRecords(i * 700, 600) }));
    const bytes = buildFit(legs);
    const first = await settled(a.token, (await send(a.token, bytes, "tri.fit")).id);
    expect(first.status).toBe("succeeded");
    const ids = first.activity_ids;
    expect(ids).toHaveLength(3);

    const again = await settled(a.token, (await send(a.token, bytes, "tri.fit")).id);
    expect(again).toMatchObject({ status: "failed", activity_id: ids[0], activity_ids: [], error: { code: "duplicate_activity" } });
    expect(again.error!.detail).toBe(`This file was already uploaded: its activities ${ids.join(", ")} are still here. Delete every one of them to upload the file again.`);

    // The first leg deleted: the second is named, and the file is still a duplicate.
    expect((await api.call(a.token, "DELETE", `/v1/activities/${ids[0]}`)).status).toBe(204);
    const third = await settled(a.token, (await send(a.token, bytes, "tri.fit")).id);
    expect(third).toMatchObject({ status: "failed", activity_id: ids[1], error: { code: "duplicate_activity" } });
    expect(third.error!.detail).toContain(`${ids[1]}, ${ids[2]}`);

    for (const id of ids.slice(1)) expect((await api.call(a.token, "DELETE", `/v1/activities/${id}`)).status).toBe(204);
    expect((await settled(a.token, (await send(a.token, bytes, "tri.fit")).id)).status).toBe("succeeded");
  });
});

describe("GET /v1/uploads/{upload_id}", () => {
  it("shows an upload to its athlete only: another athlete, or a coach, gets 404; without activities.write 403", async () => {
    const a = await athlete();
    const up = await send(a.token, sample("gpx/missing_hr.gpx"), "m.gpx");
    expect((await get(a.token, up.id)).status).toBe(200);
    const b = await athlete();
    const res = await get(b.token, up.id);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found" });
    const coach = await athlete();
    await api.team(coach.id, [a.id]);
    expect((await get(coach.token, up.id)).status).toBe(404);
    expect((await get(b.token, "upl_doesnotexist")).status).toBe(404);
    const readOnly = await api.pat(a.id, ["activities.read"]);
    expect((await get(readOnly, up.id)).status).toBe(403);
    await settled(a.token, up.id);
  });
});

describe("crash recovery", () => {
  it("an upload whose processor died mid-processing is processed after the lease, exactly once", async () => {
    await processor.stop();
    const a = await athlete();
    const db = await api.db();
    const up = await send(a.token, sample("fit/garmin-edge-820-bike.fit"), "bike.fit");
    // A processor claims it and dies before writing anything: its claim stands until the lease ends.
    const [dead] = await claimUploads(db, { limit: 1, leaseS: 1 });
    expect(dead).toMatchObject({ id: up.id, attempts: 1 });
    processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
    await processor.idle();
    expect(Upload.parse(await (await get(a.token, up.id)).json()).status).toBe("processing");
    // Until the instant the dead claim ends, then the processor's poll takes it.
    const [lease] = await db.select({ until: uploads.claimedUntil }).from(uploads).where(eq(uploads.id, up.id));
    await new Promise((r) => setTimeout(r, Math.max(0, lease!.until!.getTime() - Date.now())));
    const done = await settled(a.token, up.id);
    expect(done.status).toBe("succeeded");
    const [row] = await db.select({ attempts: uploads.attempts }).from(uploads).where(eq(uploads.id, up.id));
    expect(row!.attempts).toBe(2);
    // The dead processor comes back to life with its stale claim: it finds the upload finished.
    expect(await processUpload(db, dead!)).toBe("already_finished");
    expect(await activitiesOf(a.id)).toBe(done.activity_ids.length);
  });

  /** A run uploaded with the processor stopped, and claimed by the test as a processor would. */
  async function claimedRun() {
    await processor.stop();
    const a = await athlete();
    const db = await api.db();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
    const [claim] = await claimUploads(db, { limit: 1 });
    expect(claim?.id).toBe(up.id);
    return { a, db, up, claim: claim! };
  }

  it("a processor whose upload another ended meanwhile finds its file gone and has nothing to do", async () => {
    const { a, db, up } = await claimedRun();
    takeEarlyParse(up.id); // dropped: this processor reads the stored file
    // Still processing, the file is read and parsed.
    expect((await parseStoredFile(db, up.id))?.length).toBe(1);
    // Another processor ends it between this one's look at its status and its read: failing an
    // upload deletes its file.
    await inTransaction(db, (tx) => failUpload(tx, up.id, { code: "invalid_file", detail: "Ended by another processor." }));
    expect(await readUploadedFile(db, up.id)).toBeNull();
    expect(await parseStoredFile(db, up.id)).toBeUndefined();
    // A processing upload without its file is still an error (retried, then failed).
    const other = await send(a.token, sample("gpx/run.gpx"), "again.gpx", { external_id: "missing-file" });
    takeEarlyParse(other.id);
    await db.delete(uploadFiles).where(eq(uploadFiles.uploadId, other.id));
    await expect(parseStoredFile(db, other.id)).rejects.toThrow(/is processing but its file is missing/);
    await db.update(uploads).set({ status: "failed" }).where(eq(uploads.id, other.id));
    processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
  });

  it("two processors finishing one upload at once make its activities once", async () => {
    const { a, db, claim } = await claimedRun();
    const outcomes = await Promise.all([processUpload(db, claim), processUpload(db, claim)]);
    expect(outcomes.sort()).toEqual(["already_finished", "succeeded"]);
    expect(await activitiesOf(a.id)).toBe(1);
    processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
  });

  // PostgreSQL only: the twin's transaction needs a connection of its own, which PGlite's one
  // connection cannot give while the save waits.
  it.runIf(process.env.TEST_DATABASE_URL)(
    "an upload whose twin commits while it waits for the file's lock fails as duplicate_activity: its check runs once the lock is held",
    async () => {
      await processor.stop();
      const a = await athlete();
      const db = await api.db();
      const bytes = sample("gpx/run.gpx");
      const first = await send(a.token, bytes, "run.gpx");
      const second = await send(a.token, bytes, "again.gpx");
      const claims = await claimUploads(db, { limit: 2 });
      const claim = claims.find((c) => c.id === second.id)!;
      const [keys] = await db.select({ id: uploads.id, athleteId: uploads.athleteId, contentSha256: uploads.contentSha256 }).from(uploads).where(eq(uploads.id, first.id));
      // Another transaction holds the file's lock, as the first upload's save would, and makes
      // the first upload's activity before it lets go.
      let letGo!: () => void;
      const released = new Promise<void>((r) => (letGo = r));
      let held!: () => void;
      const holding = new Promise<void>((r) => (held = r));
      const twinId = `act_${randomBytes(8).toString("hex")}`;
      const twin = inTransaction(db, async (tx) => {
        await lockFile(tx, keys!);
        held();
        await released;
        await tx.insert(activities).values({ id: twinId, athleteId: a.id, name: "Twin", sportType: "run", startLocal: "2026-01-01 08:00:00", elapsedTimeS: 60, source: "upload", uploadId: first.id });
        await tx.update(uploads).set({ status: "succeeded", activityIds: [twinId], claimedUntil: null }).where(eq(uploads.id, first.id));
      });
      await holding;
      const saving = processUpload(db, claim);
      // Until the second upload's save waits for the file's lock (a signal from PostgreSQL).
      const waiting = async () => {
        const [row] = rowsOf<{ n: number }>(
          await db.execute(sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`),
        );
        return row!.n;
      };
      for (let i = 0; (await waiting()) === 0; i++) {
        if (i > 1000) throw new Error("the save never waited for the file's lock");
        await new Promise((r) => setTimeout(r, 10));
      }
      letGo();
      await twin;
      expect(await saving).toBe("failed");
      const done = Upload.parse(await (await get(a.token, second.id)).json());
      expect(done).toMatchObject({ status: "failed", activity_ids: [], error: { code: "duplicate_activity" } });
      expect(done.error!.detail).toContain(twinId);
      expect(await activitiesOf(a.id)).toBe(1);
      processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
    },
  );

  it("retries an unexpected failure soon, then fails the upload with a clear error, leaving nothing half-made", async () => {
    await processor.stop();
    const a = await athlete();
    const db = await api.db();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
    let calls = 0;
    const failing = startUploadProcessor({
      db: () => api.db(),
      pollMs: 100,
      afterParse: async () => {
        calls++;
        throw new Error("the disk is on fire");
      },
    });
    try {
      for (;;) {
        await failing.idle();
        const [row] = await db.select().from(uploads).where(eq(uploads.id, up.id));
        if (row!.status !== "processing") break;
        // Until the shortened claim ends, when the poll takes the upload again.
        await new Promise((r) => setTimeout(r, Math.max(0, row!.claimedUntil!.getTime() - Date.now())));
      }
    } finally {
      await failing.stop();
      processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
    }
    expect(calls).toBe(MAX_UPLOAD_ATTEMPTS);
    const done = Upload.parse(await (await get(a.token, up.id)).json());
    expect(done).toMatchObject({ status: "failed", activity_ids: [], error: { code: "invalid_file" } });
    expect(await activitiesOf(a.id)).toBe(0);
  });

  it(`finishes a good file whose processing was cut short ${MAX_UPLOAD_ATTEMPTS} times (the service killed mid-way): a lapsed claim is no fault of the file's`, async () => {
    const a = await athlete();
    await processor.stop();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
    const db = await api.db();
    await db.update(uploads).set({ attempts: MAX_UPLOAD_ATTEMPTS, claimedUntil: sql`now() - interval '1 second'` }).where(eq(uploads.id, up.id));
    processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
    const done = await settled(a.token, up.id);
    expect({ status: done.status, error: done.error }).toEqual({ status: "succeeded", error: null });
    expect(await activitiesOf(a.id)).toBe(1);
  });

  it(`gives up after ${MAX_UPLOAD_CLAIMS} claims that never finished, with a failed upload and a clear error`, async () => {
    const a = await athlete();
    await processor.stop();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
    const db = await api.db();
    await db.update(uploads).set({ attempts: MAX_UPLOAD_CLAIMS, claimedUntil: sql`now() - interval '1 second'` }).where(eq(uploads.id, up.id));
    processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
    const done = await settled(a.token, up.id);
    expect(done).toMatchObject({ status: "failed", activity_ids: [], error: { code: "invalid_file" } });
    expect(done.error!.detail).toContain(`${MAX_UPLOAD_CLAIMS} attempts were cut short`);
    expect(await activitiesOf(a.id)).toBe(0);
  });
});

describe("early parse: a free file worker reads the file while it is stored (early-parse.ts)", () => {
  /** The shared pool's worker up, with nothing to do: what an upload's early parse needs. */
  async function freeWorker(): Promise<void> {
    await prepareUploadOffThread(sample("gpx/run.gpx"), "gpx");
    expect(fileWorkerIsFree()).toBe(true);
  }

  /** Runs a test with the shared processor stopped (these process by hand), and starts it again. */
  function processorStopped(test: () => Promise<void>): () => Promise<void> {
    return async () => {
      await processor.stop();
      try {
        await test();
      } finally {
        processor = startUploadProcessor({ db: () => api.db(), pollMs: 100 });
      }
    };
  }

  /** Sends a file (the processor stopped); the upload has an early parse waiting. Its stored file is then removed. */
  async function sendEarly(bytes: Uint8Array, name: string) {
    const a = await athlete();
    await freeWorker();
    const before = earlyParsesKept();
    const up = await send(a.token, bytes, name);
    expect(earlyParsesKept()).toBe(before + 1);
    // Reading the file back now fails (an upload processing without its file is an unexpected
    // error, retried): only the early parse can make this upload succeed at once.
    const db = await api.db();
    await db.delete(uploadFiles).where(eq(uploadFiles.uploadId, up.id));
    const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
    return { a, up, db, claim: claim! };
  }

  it("the processor saves an upload from the parse begun as it arrived, without reading the file back", processorStopped(async () => {
    const file = sample("fit/garmin-edge-820-bike.fit");
    const [expected] = prepareUpload(file, "fit");
    const { a, up, db, claim } = await sendEarly(file, "bike.fit");
    const before = earlyParsesKept();
    expect(await processUpload(db, claim)).toBe("succeeded");
    expect(earlyParsesKept()).toBe(before - 1);
    const done = Upload.parse(await (await get(a.token, up.id)).json());
    expect(done.status).toBe("succeeded");
    const [streams] = await db.select({ size: activityStreams.size }).from(activityStreams).where(eq(activityStreams.activityId, done.activity_id!));
    expect(streams!.size).toBe(expected!.streamsSize);
    expect(await countRows(activityLaps, eq(activityLaps.activityId, done.activity_id!))).toBe(expected!.laps.length);
  }));

  it("a file the early parse refuses fails with the parser's words", processorStopped(async () => {
    const fit = sample("fit/activity-small-fenix2-run.fit");
    const { a, up, db, claim } = await sendEarly(fit.subarray(0, Math.floor(fit.length / 2)), "cut.fit");
    expect(await processUpload(db, claim)).toBe("failed");
    const done = Upload.parse(await (await get(a.token, up.id)).json());
    expect(done).toMatchObject({ status: "failed", activity_ids: [], error: { code: "invalid_file" } });
    expect(done.error!.detail).not.toMatch(/attempts failed|missing/);
    expect(await activitiesOf(a.id)).toBe(0);
  }));

  it("an early parse lost for the service's own reason (its pool closed) is done again from the stored file", processorStopped(async () => {
    const a = await athlete();
    const file = sample("fit/garmin-edge-820-bike.fit");
    const up = await send(a.token, file, "bike.fit");
    // Whatever the request began is set aside; this test begins one and closes the pool in the
    // same turn, before the task can reach the worker.
    await takeEarlyParse(up.id)?.().catch(() => {});
    await freeWorker();
    const before = earlyParsesKept();
    expect(beginEarlyParse(up.id, file, "fit")).toBe(true);
    void closeFileWorkers();
    expect(earlyParsesKept()).toBe(before + 1);
    const db = await api.db();
    const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
    expect(await processUpload(db, claim!)).toBe("succeeded");
    expect(earlyParsesKept()).toBe(before);
    expect(await activitiesOf(a.id)).toBe(1);
  }));

  it("keeps the file's bytes while the worker is busy, and the processor parses them without reading the file back", processorStopped(async () => {
    const a = await athlete();
    await freeWorker();
    // Busy until the pool is closed below.
    const busy = runOnSharedPool({ op: "spin", ms: 120_000 }).catch((e: unknown) => e);
    expect(fileWorkerIsFree()).toBe(false);
    const file = sample("gpx/run.gpx");
    const before = { kept: earlyParsesKept(), bytes: earlyBytesKept() };
    const up = await send(a.token, file, "run.gpx");
    expect(earlyParsesKept()).toBe(before.kept + 1);
    expect(earlyBytesKept()).toBeGreaterThanOrEqual(before.bytes + file.byteLength);
    await closeFileWorkers();
    expect(await busy).toBeInstanceOf(FileWorkerError);
    // Only the kept bytes can make this upload succeed at once: the stored file is gone.
    const db = await api.db();
    await db.delete(uploadFiles).where(eq(uploadFiles.uploadId, up.id));
    const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
    expect(await processUpload(db, claim!)).toBe("succeeded");
    expect(earlyParsesKept()).toBe(before.kept);
    expect(earlyBytesKept()).toBe(before.bytes);
    expect(await activitiesOf(a.id)).toBe(1);
  }));

  it("keeps no more bytes than its bound while the worker is busy; the rest are read back when claimed", processorStopped(async () => {
    await freeWorker();
    const busy = runOnSharedPool({ op: "spin", ms: 120_000 }).catch((e: unknown) => e);
    expect(fileWorkerIsFree()).toBe(false);
    // Files of the largest size kept, until the bound is reached (ids no upload has: nothing claims them).
    const before = earlyBytesKept();
    const room = Math.floor((EARLY_MAX_KEPT_BYTES - before) / EARLY_MAX_BYTES);
    const ids = Array.from({ length: room + 1 }, (_, i) => `upl_bound_${i}`);
    const taken = ids.map((id) => beginEarlyParse(id, new Uint8Array(EARLY_MAX_BYTES), "fit"));
    try {
      expect(room).toBeGreaterThan(0);
      expect(taken.filter(Boolean)).toHaveLength(room);
      expect(taken.at(-1)).toBe(false);
      expect(earlyBytesKept()).toBeLessThanOrEqual(EARLY_MAX_KEPT_BYTES);
      // A larger file is never kept, whatever is free.
      expect(beginEarlyParse("upl_bound_large", new Uint8Array(EARLY_MAX_BYTES + 1), "fit")).toBe(false);
    } finally {
      // Taken and not called: dropped, and their share given back.
      for (const id of ids) takeEarlyParse(id);
      await closeFileWorkers();
      await busy;
    }
    expect(earlyBytesKept()).toBe(before);
  }));

  it("an upload whose processing meets the database unreachable is put back uncounted, however often, and succeeds once it is back (never invalid_file)", processorStopped(async () => {
    const a = await athlete();
    const db = await api.db();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
    // What postgres.js throws while the server is away: a real connection refused by a port where
    // nothing listens, raised where the processor next talks to the database.
    const gone = postgres("postgres://postgres@127.0.0.1:1/gone", { max: 1, connect_timeout: 2, onnotice: () => {} });
    const unreachable = await gone`select 1`.then(
      () => expect.unreachable("something listens on port 1"),
      (e: unknown) => e,
    );
    await gone.end();
    for (let i = 0; i <= Math.max(MAX_UPLOAD_ATTEMPTS, MAX_UPLOAD_CLAIMS); i++) {
      await db.update(uploads).set({ claimedUntil: null }).where(eq(uploads.id, up.id));
      const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
      expect(
        await processUpload(db, claim!, {
          afterParse: async () => {
            throw unreachable;
          },
        }),
      ).toBe("deferred");
    }
    const [row] = await db.select({ status: uploads.status, attempts: uploads.attempts, failures: uploads.failures }).from(uploads).where(eq(uploads.id, up.id));
    expect(row).toMatchObject({ status: "processing", attempts: 0, failures: 0 });
    expect(await activitiesOf(a.id)).toBe(0);
    await db.update(uploads).set({ claimedUntil: null }).where(eq(uploads.id, up.id));
    const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
    expect(await processUpload(db, claim!)).toBe("succeeded");
    expect(await activitiesOf(a.id)).toBe(1);
  }));

  it("an upload whose file worker is stopped from outside counts the attempt (the OOM killer stops a worker its file exhausted with the same signal)", processorStopped(async () => {
    const a = await athlete();
    const db = await api.db();
    const up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
    const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
    const stopped = new FileWorkerStoppedError("The service was interrupted while it worked on this file; try again shortly.");
    expect(await processUpload(db, claim!, { afterParse: async () => Promise.reject(stopped) })).toBe("retrying");
    const [row] = await db.select({ status: uploads.status, failures: uploads.failures }).from(uploads).where(eq(uploads.id, up.id));
    expect(row).toMatchObject({ status: "processing", failures: 1 });
  }));

  it("an upload claimed while the file workers' queue is full is put back uncounted, and succeeds once they have room", processorStopped(async () => {
    const a = await athlete();
    await freeWorker();
    // One task holds the worker until the pool is closed; one waiting fills the queue's byte budget.
    const held = [
      runOnSharedPool({ op: "spin", ms: 120_000 }).catch((e: unknown) => e),
      runOnSharedPool({ op: "spin", ms: 1 }, DEFAULT_POOL_OPTIONS.maxQueuedBytes).catch((e: unknown) => e),
    ];
    const db = await api.db();
    let up: UploadWire;
    try {
      up = await send(a.token, sample("gpx/run.gpx"), "run.gpx");
      // More busy claims than a file may fail or be cut short: none of them counts.
      for (let i = 0; i <= Math.max(MAX_UPLOAD_ATTEMPTS, MAX_UPLOAD_CLAIMS); i++) {
        await db.update(uploads).set({ claimedUntil: null }).where(eq(uploads.id, up.id));
        const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
        expect(await processUpload(db, claim!)).toBe("deferred");
      }
      const [row] = await db
        .select({ status: uploads.status, attempts: uploads.attempts, failures: uploads.failures, waitS: sql<number>`extract(epoch from ${uploads.claimedUntil} - now())::float8` })
        .from(uploads)
        .where(eq(uploads.id, up.id));
      expect(row).toMatchObject({ status: "processing", attempts: 0, failures: 0 });
      // Put back for BUSY_DELAY_S from the last claim (the database's clock on both sides).
      expect(Number(row!.waitS)).toBeGreaterThan(0);
      expect(Number(row!.waitS)).toBeLessThanOrEqual(BUSY_DELAY_S);
      // Not claimable until then.
      expect(await claimUploads(db, { limit: 1, uploadId: up.id })).toEqual([]);
    } finally {
      await closeFileWorkers();
      await Promise.all(held);
    }
    await db.update(uploads).set({ claimedUntil: null }).where(eq(uploads.id, up.id));
    const [claim] = await claimUploads(db, { limit: 1, uploadId: up.id });
    expect(await processUpload(db, claim!)).toBe("succeeded");
    expect(await activitiesOf(a.id)).toBe(1);
  }));
});

describe("console routes (session, same origin)", () => {
  async function consolePost(cookie: string, body: FormData, origin = api.url): Promise<Response> {
    return fetch(`${api.url}/api/console/uploads`, { method: "POST", headers: { cookie, origin }, body });
  }

  it("uploads as the signed-in athlete, sharing external_id with the athlete's PATs, and polls only their own", async () => {
    const a = await athlete();
    const cookie = await sessionCookieFor(a.id);
    const viaPat = await send(a.token, sample("gpx/run.gpx"), "run.gpx", { external_id: "phone-1" });
    const res = await consolePost(cookie, form([{ name: "file", file: sample("gpx/run.gpx"), fileName: "run.gpx" }, { name: "external_id", value: "phone-1" }]));
    expect(res.status).toBe(202);
    const same = Upload.parse(await res.json());
    expect(same.id).toBe(viaPat.id);
    expect(res.headers.get("location")).toBe(`/api/console/uploads/${same.id}`);

    const fresh = await consolePost(cookie, form([{ name: "file", file: sample("tcx/sample.tcx"), fileName: "sample.tcx" }]));
    expect(fresh.status).toBe(202);
    const up = Upload.parse(await fresh.json());
    const polled = await fetch(`${api.url}/api/console/uploads/${up.id}`, { headers: { cookie } });
    expect(polled.status).toBe(200);
    expect(Upload.parse(await polled.json()).id).toBe(up.id);

    const b = await athlete();
    const theirs = await fetch(`${api.url}/api/console/uploads/${up.id}`, { headers: { cookie: await sessionCookieFor(b.id) } });
    expect(theirs.status).toBe(404);
    await settled(a.token, up.id);
  });

  it("makes a file sent again under its Idempotency-Key once (the queue's retry after a lost answer); another file under that key is 422", async () => {
    const a = await athlete();
    const cookie = await sessionCookieFor(a.id);
    const keyed = (file: Uint8Array, name: string) =>
      fetch(`${api.url}/api/console/uploads`, { method: "POST", headers: { cookie, origin: api.url, "idempotency-key": "upload.k1" }, body: form([{ name: "file", file, fileName: name }]) });
    const before = await countRows(uploads);
    const first = await keyed(sample("gpx/run.gpx"), "run.gpx");
    expect(first.status).toBe(202);
    const again = await keyed(sample("gpx/run.gpx"), "run.gpx");
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const up = Upload.parse(await first.json());
    expect(Upload.parse(await again.json()).id).toBe(up.id);
    expect(again.headers.get("location")).toBe(`/api/console/uploads/${up.id}`);
    const other = await keyed(sample("tcx/sample.tcx"), "sample.tcx");
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: "idempotency_key_reused" });
    expect(await countRows(uploads)).toBe(before + 1);
    await settled(a.token, up.id);
  });

  it("refuses a cross-site upload and one without a session, recording nothing", async () => {
    const a = await athlete();
    const before = await countRows(uploads);
    const cross = await consolePost(await sessionCookieFor(a.id), form([{ name: "file", file: sample("gpx/run.gpx") }]), "https://evil.example");
    expect(cross.status).toBe(400);
    const anonymous = await consolePost("", form([{ name: "file", file: sample("gpx/run.gpx") }]));
    expect(anonymous.status).toBe(401);
    expect(await countRows(uploads)).toBe(before);
  });
});
