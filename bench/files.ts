// files: activity files in (uploads and their processing) and streams out, over PostgreSQL.
//
// Targets (each in every round, not the best one):
// - import: from the end of the upload request to `succeeded`, a 4-hour 1 Hz FIT ride takes at
//   most 2× the time @garmin/fitsdk's Decoder alone needs to decode the same file here (three
//   imports a round, each just after a decode of it, the round's imports over its decodes);
// - burst: 100 one-hour runs uploaded by 4 clients at once are processed at no less than half
//   the per-file rate of one such run uploaded alone, and GET /v1/athletes/me's p99 meanwhile
//   stays within 1.5× of its p99 at the same rate with nothing processing;
// - streams: GET …/streams at full resolution for that ride ≥ 0.5× the req/s of a bare Next.js
//   handler answering the same bytes from memory; `resolution=medium` ≥ 0.8×;
// - storage: at most 8 bytes per sample per channel in activity_streams, everything included;
// - memory: ten 25 MiB uploads at once grow the service's resident memory by under 512 MiB
//   (its processes' proportional set sizes summed: see treeMemory).
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Decoder, Stream } from "@garmin/fitsdk";
import { exportFit, exportGpx } from "../lib/files/export";
import { syntheticActivity } from "../lib/files/synthetic";
import { MAX_FILE_BYTES } from "../lib/files/detect";
import { CpuMeter, mainThreadTicks, statFields, ticksMs, type CpuUse } from "./lib/cpu";
import { connect, databaseUrl, type Sql } from "./lib/database";
import { WORK_CHANNEL } from "../lib/events/channel";
import { atRate, throughput, type Target } from "./lib/load";
import { throughputInTurns, warmUpInTurns } from "./lib/turns";
import { CACHE_DIR } from "./lib/paths";
import { check, checkEvery, type ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";
import { startBare, startService } from "./lib/servers";
import { athleteId, createBenchToken, prepareWorld, resetRateLimits, type BenchToken } from "./lib/world";

/** Its own small database: uploads add activities, which would unseat api-read's world. */
const FILES_DB = process.env.BENCH_FILES_DB ?? "aas_bench_files";
const WORLD = { athletes: 12, activitiesEach: 10, bigAthleteActivities: 10, version: 1 };
const BURST_FILES = 100;
const BURST_CLIENTS = 4;
const BIG_UPLOADS = 10;
/** Imports of the ride per round, each just after a decode of it (see the import below). */
const IMPORT_PAIRS = 3;
/** /v1/athletes/me while the burst processes, open loop. */
const PROBE_RPS = 50;

type Upload = { id: string; status: "processing" | "succeeded" | "failed"; activity_id: string | null; activity_ids: string[]; error: { code: string; detail: string } | null };

const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** fitsdk's Decoder alone, as its README uses it: the import's yardstick. Warm, median of 7. */
function decodeMs(bytes: Uint8Array, { warm = 3, timed = 7 } = {}): number {
  const once = () => {
    const t = performance.now();
    const { errors } = new Decoder(Stream.fromByteArray(bytes)).read();
    const ms = performance.now() - t;
    if (errors.length) throw new Error(`fitsdk could not decode the bench file: ${String(errors[0])}`);
    return ms;
  };
  for (let i = 0; i < warm; i++) once();
  return median(Array.from({ length: timed }, once));
}

async function upload(base: string, token: BenchToken, bytes: Uint8Array, fileName: string): Promise<{ upload: Upload; sentAt: number }> {
  const form = new FormData();
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName);
  const res = await fetch(`${base}/v1/athletes/me/uploads`, { method: "POST", headers: { Authorization: `Bearer ${token.token}` }, body: form });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`upload of ${fileName}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return { upload: JSON.parse(text) as Upload, sentAt: performance.now() };
}

/** Polls every few milliseconds (the figure is a processing time, so the poll must not add much). */
async function settled(base: string, token: BenchToken, id: string, everyMs = 5, timeoutMs = 600_000): Promise<{ upload: Upload; at: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${base}/v1/uploads/${id}`, { headers: { Authorization: `Bearer ${token.token}` } });
    const u = (await res.json()) as Upload;
    if (res.status !== 200) throw new Error(`GET /v1/uploads/${id}: HTTP ${res.status}`);
    if (u.status !== "processing") {
      if (u.status !== "succeeded") throw new Error(`upload ${id} ended ${u.status}: ${JSON.stringify(u.error)}`);
      return { upload: u, at: performance.now() };
    }
    if (performance.now() > deadline) throw new Error(`upload ${id} still processing after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * When an upload's outcome committed, heard rather than polled: the save that ends an upload
 * appends `activity.created` to the outbox, whose NOTIFY PostgreSQL delivers at that commit.
 * Each notification is checked against the upload's row on the bench's own connection; a check
 * every 250 ms stands in for one missed. (Polling the API every 5 ms, as this bench once did,
 * took some half a core of a 2-core machine from the processing it timed: the same build's
 * 4-hour ride took 129–195 ms polled and 85–144 ms heard.)
 */
async function committed(sql: Sql, id: string, timeoutMs = 600_000): Promise<number> {
  let check: () => void = () => {};
  // Each check is its own query: they run in order on the one connection, so the first that
  // finds the upload finished is the earliest one heard.
  const done = new Promise<number>((resolve, reject) => {
    check = () => {
      const heardAt = performance.now();
      sql<{ status: string }[]>`select status from uploads where id = ${id}`.then(([row]) => {
        if (row && row.status !== "processing") resolve(heardAt);
      }, reject);
    };
  });
  const listening = await sql.listen(WORK_CHANNEL, () => check());
  const safety = setInterval(() => check(), 250);
  let timeout: NodeJS.Timeout | undefined;
  try {
    check();
    const late = new Promise<never>((_, reject) => {
      timeout = setTimeout(() => reject(new Error(`upload ${id} still processing after ${timeoutMs / 1000} s`)), timeoutMs);
    });
    return await Promise.race([done, late]);
  } finally {
    clearInterval(safety);
    clearTimeout(timeout);
    await listening.unlisten();
  }
}

/**
 * Memory of a process and all its descendants (the launcher, the server and its file workers), in
 * bytes: `rss` sums each process's resident set, `pss` its proportional share of it (Linux's
 * `Pss` in /proc/<pid>/smaps_rollup: a page mapped by n processes counts 1/n in each). The target
 * is held to `pss`. A file worker is started by forking the server (libuv's spawn), and until
 * that child replaces itself with the worker's program it maps the server's pages too: summed
 * resident sets then count the server twice, once as itself and once as the child, a
 * process that holds no memory of its own (2026-12-01: 353 MiB of "growth" by resident sets in a
 * round whose proportional growth was 220, with such a child at 355 MiB).
 */
function treeMemory(root: number): { rss: number; pss: number } {
  const children = new Map<number, number[]>();
  for (const line of listProcs()) {
    const list = children.get(line.ppid) ?? [];
    list.push(line.pid);
    children.set(line.ppid, list);
  }
  const total = { rss: 0, pss: 0 };
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const rss = procKiB(pid, "status", /VmRSS:\s+(\d+) kB/);
    const pss = procKiB(pid, "smaps_rollup", /^Pss:\s+(\d+) kB/m);
    // The launcher is there for the whole run: without its figure this kernel does not give one.
    if (pid === root && pss === null) throw new Error(`no Pss in /proc/${pid}/smaps_rollup: the memory figure needs Linux 4.14 or later`);
    total.rss += (rss ?? 0) * 1024;
    total.pss += (pss ?? 0) * 1024;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** A figure in kB from a file of /proc/<pid>, or null when the process has exited or the file lacks it. */
function procKiB(pid: number, file: string, field: RegExp): number | null {
  try {
    const m = field.exec(readFileSync(`/proc/${pid}/${file}`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function listProcs(): { pid: number; ppid: number }[] {
  const out: { pid: number; ppid: number }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      out.push({ pid: Number(name), ppid: Number(statFields(stat).f[1]) });
    } catch {
      // exited
    }
  }
  return out;
}

async function run(opts: Parameters<Scenario["run"]>[0], log: (s: string) => void): Promise<ScenarioReport> {
  const url = databaseUrl(FILES_DB);
  await prepareWorld(url, FILES_DB, WORLD, log);
  const scopes = ["athlete.read", "activities.read", "activities.write", "location.read"] as const;
  const tokens: BenchToken[] = [];
  for (let n = 1; n <= BURST_CLIENTS + 1; n++) tokens.push(await createBenchToken(url, athleteId(n), [...scopes]));
  const rider = tokens[0]!;
  const sql = connect(url);
  // Earlier runs' uploads: each run starts from the same empty tables, so storage is this run's.
  await sql`truncate uploads, upload_files, activity_streams, activity_laps cascade`;
  await sql`delete from activities where upload_id is not null`;
  await resetRateLimits(url);

  log("making the bench files…");
  const ride = syntheticActivity({ hours: 4, hz: 1, sport: "ride", seed: 1 });
  const rideFit = exportFit(ride);
  const runs = Array.from({ length: BURST_FILES + 1 }, (_, i) => exportFit(syntheticActivity({ hours: 1, hz: 1, sport: "run", seed: 100 + i })));
  const decodeRideMs = decodeMs(rideFit);
  log(`4 h ride: ${(rideFit.byteLength / 1024).toFixed(0)} KiB FIT, ${ride.streams.size} samples; fitsdk decodes it in ${decodeRideMs.toFixed(1)} ms`);

  const service = await startService({
    databaseUrl: url,
    rebuild: opts.rebuild,
    log,
    dir: opts.serviceDir,
    // The service's warnings and errors belong in the bench's log: a failed upload says why there.
    onOutput: (line) => {
      if (/"level":"(warn|error)"/.test(line)) log(`service: ${line.slice(0, 600)}`);
    },
  });
  const base = service.server.url;
  const meter = new CpuMeter(FILES_DB);
  meter.addGroup(service.server.pid, "service");
  const cpuNotes: { what: string; cpu?: CpuUse }[] = [];
  let bare: Awaited<ReturnType<typeof startBare>> | undefined;
  try {
    // Import: IMPORT_PAIRS uploads of a 4-hour ride a round, each just after fitsdk's decode of
    // the same file is timed. This machine's speed drifts within seconds (the same decode took
    // 71, 138 and 71 ms in three rounds of one run), so one import against one decode taken a
    // moment earlier compared two moments as much as two pieces of code; as with throughput's
    // turns (lib/turns.ts), a round's figure is its imports' time over its decodes' time, each
    // pair taken side by side. Each upload is a ride of its own (4 hours at 1 Hz, another
    // seed's route and samples), so none is a duplicate and none is deleted: the storage
    // figure below counts live rows only.
    const importMs: number[] = [];
    const roundDecodeMs: number[] = [];
    // Each round's imports over its decodes, from the unrounded sums: the figure the log prints is the one checked.
    const importRatios: number[] = [];
    let rideActivity = "";
    let seed = 1;
    const importOnce = async (fit: Uint8Array) => {
      const sent = await upload(base, rider, fit, "ride.fit");
      const at = await committed(sql, sent.upload.id);
      // What the API then answers, out of the timed span.
      const done = await settled(base, rider, sent.upload.id);
      rideActivity = done.upload.activity_id!;
      return at - sent.sentAt;
    };
    // The first upload warms the processor's code paths; it is not counted.
    const warm = await importOnce(exportFit(syntheticActivity({ hours: 4, hz: 1, sport: "ride", seed: 1000 })));
    log(`import warm-up: ${warm.toFixed(0)} ms`);
    for (let r = 1; r <= opts.rounds; r++) {
      const pairs: { decode: number; ms: number }[] = [];
      for (let i = 0; i < IMPORT_PAIRS; i++) {
        // The last ride is the one the streams are measured on.
        const fit = r === opts.rounds && i === IMPORT_PAIRS - 1 ? rideFit : exportFit(syntheticActivity({ hours: 4, hz: 1, sport: "ride", seed: ++seed }));
        const decode = decodeMs(fit, { warm: 1, timed: 3 });
        pairs.push({ decode, ms: await importOnce(fit) });
      }
      const sum = (k: "decode" | "ms") => pairs.reduce((a, p) => a + p[k], 0);
      importMs.push(round1(sum("ms") / IMPORT_PAIRS));
      roundDecodeMs.push(round1(sum("decode") / IMPORT_PAIRS));
      importRatios.push(round2(sum("ms") / sum("decode")));
      log(`import round ${r}: ${pairs.map((p) => `${p.ms.toFixed(0)} ms after a decode of ${p.decode.toFixed(1)}`).join(", ")} (${importRatios.at(-1)}×)`);
    }

    // One 1-hour run alone: the per-file rate the burst is held to.
    const aloneStart = performance.now();
    const one = await upload(base, rider, runs[BURST_FILES]!, "run-alone.fit");
    await settled(base, rider, one.upload.id);
    const aloneMs = performance.now() - aloneStart;
    const aloneRate = 1000 / aloneMs;

    // The API's p99 at PROBE_RPS with nothing processing, then during the burst.
    const me: Target = { url: `${base}/v1/athletes/me`, headers: { Authorization: `Bearer ${rider.token}` } };
    await throughput(me, { connections: 4, durationS: 2 });
    const probeS = Math.max(5, Math.min(30, Math.round((BURST_FILES * aloneMs) / 1000 / 2)));
    const idle = await atRate(me, { rps: PROBE_RPS, durationS: probeS });
    const burstCpu = meter.snapshot();
    // Where the burst's work lands: the server's one JavaScript thread (which /me queues for)
    // against the file workers' (scripts/server.mjs; lib/files/worker/entry.ts's bundle).
    const mainThreads = () => ({
      server: mainThreadTicks(service.server.pid, /scripts\/server\.mjs/),
      workers: mainThreadTicks(service.server.pid, /file-worker/),
    });
    const threadsBefore = mainThreads();
    const burstStart = performance.now();
    const probing = atRate(me, { rps: PROBE_RPS, durationS: probeS });
    const clients = tokens.slice(1, 1 + BURST_CLIENTS);
    const burst = Promise.all(
      clients.map(async (token, c) => {
        const mine = runs.slice(0, BURST_FILES).filter((_, i) => i % BURST_CLIENTS === c);
        const sent = [];
        for (const [i, bytes] of mine.entries()) sent.push((await upload(base, token, bytes, `run-${c}-${i}.fit`)).upload.id);
        for (const id of sent) await settled(base, token, id, 50);
      }),
    );
    const [busy, burstEnd] = await Promise.all([probing, burst.then(() => performance.now())]);
    cpuNotes.push({ what: "burst", cpu: meter.since(burstCpu) });
    const threadsAfter = mainThreads();
    const perFileMs = {
      server: Math.round(ticksMs(threadsAfter.server - threadsBefore.server) / BURST_FILES),
      workers: Math.round(ticksMs(threadsAfter.workers - threadsBefore.workers) / BURST_FILES),
    };
    const burstS = (burstEnd - burstStart) / 1000;
    const burstRate = BURST_FILES / burstS;
    log(
      `burst: ${BURST_FILES} runs in ${burstS.toFixed(1)} s (${burstRate.toFixed(1)} files/s; alone ${aloneRate.toFixed(1)} files/s);` +
        ` /me p99 ${idle.latencyMs.p99} ms idle, ${busy.latencyMs.p99} ms during;` +
        ` CPU per file: server's main thread ${perFileMs.server} ms, file workers' ${perFileMs.workers} ms`,
    );

    // Streams: the service against a bare handler answering the very bytes it answered.
    const streamsUrl = (resolution: string) => `${base}/v1/activities/${rideActivity}/streams?resolution=${resolution}`;
    const bytesDir = path.join(CACHE_DIR, "bench-bytes");
    mkdirSync(bytesDir, { recursive: true });
    const sizes: Record<string, number> = {};
    for (const res of ["full", "medium"]) {
      const r = await fetch(streamsUrl(res), { headers: { Authorization: `Bearer ${rider.token}` } });
      const body = Buffer.from(await r.arrayBuffer());
      if (r.status !== 200) throw new Error(`streams ${res}: HTTP ${r.status}: ${body.toString().slice(0, 300)}`);
      const parsed = JSON.parse(body.toString()) as { size: number; streams: Record<string, unknown[]> };
      if (res === "full" && parsed.size !== ride.streams.size) throw new Error(`full streams answered ${parsed.size} samples, not ${ride.streams.size}`);
      sizes[res] = body.byteLength;
      writeFileSync(path.join(bytesDir, `${res}.json`), body);
    }
    // Exports of the ride, reported: the whole request, generating the file on the file worker
    // included. The first of each warms its path and is not counted; median of 5.
    const exportMs: Record<string, number> = {};
    for (const format of ["fit", "gpx", "tcx"]) {
      const times: number[] = [];
      for (let i = 0; i <= 5; i++) {
        const t0 = performance.now();
        const r = await fetch(`${base}/v1/activities/${rideActivity}/export?format=${format}`, { headers: { Authorization: `Bearer ${rider.token}` } });
        const body = await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`export ${format}: HTTP ${r.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
        if (i > 0) times.push(performance.now() - t0);
      }
      exportMs[format] = round1(median(times));
    }
    log(`export of the 4 h ride, median of 5: FIT ${exportMs.fit} ms, GPX ${exportMs.gpx} ms, TCX ${exportMs.tcx} ms`);
    bare = await startBare({ log, mode: service.mode, env: { BENCH_BYTES_DIR: bytesDir } });
    meter.addGroup(bare.server.pid, "bare");
    const targets = {
      bareFull: { url: `${bare.server.url}/bytes/full` },
      full: { url: streamsUrl("full"), headers: { Authorization: `Bearer ${rider.token}` } },
      bareMedium: { url: `${bare.server.url}/bytes/medium` },
      medium: { url: streamsUrl("medium"), headers: { Authorization: `Bearer ${rider.token}` } },
    } satisfies Record<string, Target>;
    const connections = Math.min(opts.connections, 16);
    await warmUpInTurns(meter, log, targets, connections);
    const rounds = await throughputInTurns(meter, log, targets, { connections, durationS: opts.durationS, rounds: opts.rounds }, (r, key, res) =>
      cpuNotes.push({ what: `${key} round ${r}`, cpu: res.cpu }),
    );
    const ratio = (svc: "full" | "medium", b: "bareFull" | "bareMedium") => rounds[svc].map((x, i) => round2(x.rps / rounds[b][i]!.rps));

    // Storage: every stream row this run wrote, TOAST and indexes included.
    const [store] = await sql<{ bytes: string; values: string; rows: string }[]>`
      select pg_total_relation_size('activity_streams')::text as bytes,
             coalesce(sum(size::bigint * cardinality(keys)), 0)::text as values,
             count(*)::text as rows
      from activity_streams`;
    const bytesPerValue = Number(store!.bytes) / Number(store!.values);

    // Memory: ten 25 MiB files at once (GPX: the largest files devices send are text).
    log("making ten 25 MiB files…");
    const big: Uint8Array[] = [];
    for (let i = 0; i < BIG_UPLOADS; i++) {
      let hours = 24;
      let bytes = Buffer.from(exportGpx(syntheticActivity({ hours, hz: 1, sport: "ride", seed: 1000 + i })));
      while (bytes.byteLength > MAX_FILE_BYTES) {
        hours = (hours * MAX_FILE_BYTES) / bytes.byteLength - 0.1;
        bytes = Buffer.from(exportGpx(syntheticActivity({ hours, hz: 1, sport: "ride", seed: 1000 + i })));
      }
      big.push(bytes);
    }
    const bigMiB = round1(big.reduce((a, b) => a + b.byteLength, 0) / BIG_UPLOADS / 2 ** 20);
    await new Promise((r) => setTimeout(r, 1000)); // let the burst's garbage be collected
    const memBefore = treeMemory(service.server.pid);
    const memPeak = { ...memBefore };
    const sampler = setInterval(() => {
      const now = treeMemory(service.server.pid);
      memPeak.rss = Math.max(memPeak.rss, now.rss);
      memPeak.pss = Math.max(memPeak.pss, now.pss);
    }, 50);
    try {
      const bigTokens = tokens.slice(1, 1 + BURST_CLIENTS);
      const sent = await Promise.all(big.map((b, i) => upload(base, bigTokens[i % bigTokens.length]!, b, `big-${i}.gpx`)));
      await Promise.all(sent.map((s, i) => settled(base, bigTokens[i % bigTokens.length]!, s.upload.id, 100)));
    } finally {
      clearInterval(sampler);
    }
    const mib = (bytes: number) => round1(bytes / 2 ** 20);
    const growthMiB = mib(memPeak.pss - memBefore.pss);
    log(
      `ten ${bigMiB} MiB uploads: proportional memory ${mib(memBefore.pss)} → peak ${mib(memPeak.pss)} MiB;` +
        ` resident sets summed ${mib(memBefore.rss)} → peak ${mib(memPeak.rss)} MiB`,
    );

    const worst = cpuNotes.reduce((a, b) => ((b.cpu?.othersCores ?? 0) > (a.cpu?.othersCores ?? 0) ? b : a));
    return {
      figures: [
        { name: "fitsdk decode of the 4 h ride (14,400 samples), at the start", value: round1(decodeRideMs), unit: "ms" },
        { name: `fitsdk decode beside each import, mean of ${IMPORT_PAIRS} a round`, value: roundDecodeMs.join(" / "), unit: "ms" },
        { name: `import of the 4 h ride, mean of ${IMPORT_PAIRS} a round`, value: importMs.join(" / "), unit: "ms" },
        { name: "one 1 h run alone, upload to succeeded", value: Math.round(aloneMs), unit: "ms" },
        { name: `burst: ${BURST_FILES} runs by ${BURST_CLIENTS} clients`, value: `${burstS.toFixed(1)} s, ${burstRate.toFixed(2)} files/s` },
        { name: `/v1/athletes/me at ${PROBE_RPS} req/s: p99 idle / during the burst`, value: `${idle.latencyMs.p99} / ${busy.latencyMs.p99}`, unit: "ms" },
        { name: "burst CPU per file: the server's main thread / the file workers' main threads", value: `${perFileMs.server} / ${perFileMs.workers}`, unit: "ms" },
        { name: "export of the 4 h ride through the API, median of 5: FIT / GPX / TCX", value: `${exportMs.fit} / ${exportMs.gpx} / ${exportMs.tcx}`, unit: "ms" },
        { name: "streams answer: full / medium", value: `${(sizes.full! / 1024).toFixed(0)} / ${(sizes.medium! / 1024).toFixed(0)}`, unit: "KiB" },
        ...(["bareFull", "full", "bareMedium", "medium"] as const).map((k) => ({
          name: `${k} req/s, each round`,
          value: rounds[k].map((x) => Math.round(x.rps)).join(" / "),
        })),
        { name: "ten big uploads: resident sets summed, before → peak", value: `${mib(memBefore.rss)} → ${mib(memPeak.rss)}`, unit: "MiB" },
        { name: "activity_streams", value: `${store!.rows} rows, ${Number(store!.values).toLocaleString("en")} values, ${(Number(store!.bytes) / 2 ** 20).toFixed(1)} MiB on disk` },
        { name: "other processes' CPU, worst measurement", value: worst.cpu ? `${worst.cpu.othersCores} cores (${worst.what})` : "unknown" },
      ],
      warnings: [
        ...(service.build.stale ? [`the service's build is older than its sources: rerun with --rebuild`] : []),
        ...((worst.cpu?.othersCores ?? 0) > 0.2 ? [`other processes used ${worst.cpu!.othersCores} cores during ${worst.what}: figures are understated`] : []),
      ],
      checks: [
        checkEvery("import of a 4 h 1 Hz FIT ride vs fitsdk decode alone, every round", importRatios, "≤", 2, "×"),
        check(`burst per-file rate vs one alone`, round2(burstRate / aloneRate), "≥", 0.5, "×"),
        check("/v1/athletes/me p99 during the burst vs idle", round2(busy.latencyMs.p99 / idle.latencyMs.p99), "≤", 1.5, "×"),
        checkEvery("streams full vs bare req/s, every round", ratio("full", "bareFull"), "≥", 0.5, "×"),
        checkEvery("streams medium vs bare req/s, every round", ratio("medium", "bareMedium"), "≥", 0.8, "×"),
        check("activity_streams bytes per sample per channel", round2(bytesPerValue), "≤", 8, "B"),
        check(`resident memory growth (proportional), ten ${bigMiB} MiB uploads at once`, growthMiB, "<", 512, "MiB"),
      ],
      details: { importMs, exportMs, roundDecodeMs, decodeRideMs, aloneMs, burstS, idle, busy, perFileMs, rounds, storage: store, memBefore, memPeak, cpu: cpuNotes },
    };
  } finally {
    await sql.end();
    await Promise.all([bare?.server.stop(), service.server.stop()]);
  }
}

export const files: Scenario = {
  name: "files",
  summary: "FIT import vs fitsdk decode, an upload burst, streams vs a bare handler, bytes per sample, memory under big uploads",
  run,
};
