import { describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { activities, uploadFiles, uploads } from "@/lib/db/schema";
import { setupApi } from "@/lib/testing/fixtures";
import { processUploadFn, UPLOAD_RECEIVED } from "./process-upload";
import { closeFileWorkers, DEFAULT_POOL_OPTIONS, fileWorkerIsFree, prepareUploadOffThread, runOnSharedPool } from "@/lib/files/worker/pool";
import { BUSY_DELAY_S } from "@/lib/uploads/process-upload";
import { claimUploads, deferUploadClaim, retryDelayS } from "@/lib/uploads/claim-uploads";
import { takeEarlyParse } from "@/lib/uploads/early-parse";

const api = setupApi();

async function upload(token: string, file: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(readFileSync(file))]), "a.gpx");
  const res = await fetch(`${api.url}/v1/athletes/me/uploads`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

/** Runs the function for the upload's event: it is put back (`outcome`), and an event to take it again is sent for `againInS` from now. */
async function expectTakenAgainIn(id: string, outcome: "deferred" | "retrying", againInS: number) {
  const before = Date.now();
  const t = new InngestTestEngine({
    function: processUploadFn,
    events: [{ name: UPLOAD_RECEIVED, data: { upload_id: id } }],
    steps: [{ id: "retry-when-free", handler: () => ({ ids: [] }) }],
  });
  const { result, ctx } = await t.execute();
  expect(result).toEqual({ outcome, upload_id: id, again_in_s: againInS });
  expect(ctx.step.sendEvent).toHaveBeenCalledWith("retry-when-free", { name: UPLOAD_RECEIVED, data: { upload_id: id }, ts: expect.any(Number) });
  const sent = (ctx.step.sendEvent.mock.calls[0] as [string, { ts: number }])[1];
  expect(sent.ts).toBeGreaterThanOrEqual(before + againInS * 1000);
  expect(sent.ts).toBeLessThan(Date.now() + againInS * 1000 + 1000);
}

describe("process-upload (Inngest)", () => {
  it("an event naming an upload processes one upload, once: a second run of the same event finds nothing waiting", async () => {
    const a = await api.person();
    const id = await upload(await api.pat(a.id), "/work/shared/samples/gpx/run.gpx");
    const run = () => new InngestTestEngine({ function: processUploadFn, events: [{ name: UPLOAD_RECEIVED, data: { upload_id: id } }] }).execute();
    const first = await run();
    expect(first.result).toEqual({ outcome: "succeeded" });
    const db = await api.db();
    const [row] = await db.select().from(uploads).where(eq(uploads.id, id));
    expect(row).toMatchObject({ status: "succeeded", attempts: 1 });
    expect((await run()).result).toEqual({ outcome: "not-claimed" });
    expect(await db.select().from(activities).where(eq(activities.athleteId, a.id))).toHaveLength(1);
  });

  it("the sweep (cron, or an event naming no upload) hands out each upload waiting for a processor", async () => {
    const a = await api.person();
    const id = await upload(await api.pat(a.id), "/work/shared/samples/gpx/missing_hr.gpx");
    const t = new InngestTestEngine({
      function: processUploadFn,
      events: [{ name: UPLOAD_RECEIVED, data: {} }],
      steps: [{ id: "dispatch-waiting", handler: () => ({ ids: [] }) }],
    });
    const { result, ctx } = await t.execute();
    expect(result).toMatchObject({ dispatched: 1 });
    expect(ctx.step.sendEvent).toHaveBeenCalledWith("dispatch-waiting", [{ id: `upload-${id}-0`, name: UPLOAD_RECEIVED, data: { upload_id: id } }]);
  });

  it("a sweep hands out an upload it already handed out under the same event id (Inngest drops it), and under a new one once its claim changed; the minute's cron under one per minute", async () => {
    await (await api.db()).update(uploads).set({ status: "failed" }).where(eq(uploads.status, "processing"));
    const a = await api.person();
    const id = await upload(await api.pat(a.id), "/work/shared/samples/gpx/run.gpx");
    const sweepIds = async (event: { name: string; data: object; ts?: number }) => {
      const { ctx } = await new InngestTestEngine({ function: processUploadFn, events: [event], steps: [{ id: "dispatch-waiting", handler: () => ({ ids: [] }) }] }).execute();
      const call = vi.mocked(ctx.step.sendEvent).mock.calls.find(([stepId]) => stepId === "dispatch-waiting");
      return (call![1] as { id: string; data: { upload_id: string } }[]).filter((e) => e.data.upload_id === id).map((e) => e.id);
    };
    // Each commit's sweep lists every upload waiting: a second one while the first hand-out is
    // still queued names it as the first did.
    const first = await sweepIds({ name: UPLOAD_RECEIVED, data: {} });
    expect(first).toHaveLength(1);
    expect(await sweepIds({ name: UPLOAD_RECEIVED, data: {} })).toEqual(first);
    // Claimed and put back (the file workers were full): a new hand-out once its wait is over.
    const db = await api.db();
    const [claimed] = await claimUploads(db, { limit: 1, uploadId: id });
    await deferUploadClaim(db, claimed!, 0.05);
    await new Promise((r) => setTimeout(r, 100));
    const again = await sweepIds({ name: UPLOAD_RECEIVED, data: {} });
    expect(again).toHaveLength(1);
    expect(again[0]).not.toBe(first[0]);
    // The minute's cron: a hand-out of its own each minute.
    const now = Date.now();
    const cron = await sweepIds({ name: "inngest/scheduled.timer", data: { cron: "* * * * *" }, ts: now });
    const nextMinute = await sweepIds({ name: "inngest/scheduled.timer", data: { cron: "* * * * *" }, ts: now + 60_000 });
    expect(cron).toHaveLength(1);
    expect(cron[0]).not.toBe(again[0]);
    expect(nextMinute[0]).not.toBe(cron[0]);
  });

  it("a run whose upload is still held a little longer than its event expected (the hold on the database's clock) waits for the hold's end and takes it then", async () => {
    await (await api.db()).update(uploads).set({ status: "failed" }).where(eq(uploads.status, "processing"));
    const a = await api.person();
    const id = await upload(await api.pat(a.id), "/work/shared/samples/gpx/run.gpx");
    const db = await api.db();
    // Put back for 300 ms by the database's clock; the event that names it comes before that ends.
    const [claimed] = await claimUploads(db, { limit: 1, uploadId: id });
    await deferUploadClaim(db, claimed!, 0.3);
    const [held] = await db.select().from(uploads).where(eq(uploads.id, id));
    const t = new InngestTestEngine({
      function: processUploadFn,
      events: [{ name: UPLOAD_RECEIVED, data: { upload_id: id } }],
      steps: [{ id: "wait-for-hold", handler: () => new Promise((r) => setTimeout(r, 700)) }],
    });
    const { result, ctx } = await t.execute();
    const [[, until]] = vi.mocked(ctx.step.sleepUntil).mock.calls as unknown as [[string, Date]];
    expect(until.getTime()).toBeGreaterThan(held!.claimedUntil!.getTime());
    expect(result).toEqual({ outcome: "succeeded" });
    const [row] = await db.select().from(uploads).where(eq(uploads.id, id));
    expect(row).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("a run whose upload another run is processing waits for the first hold to end (a put-back of a second), not that run's whole lease, and takes the put-back upload", async () => {
    await (await api.db()).update(uploads).set({ status: "failed" }).where(eq(uploads.status, "processing"));
    const a = await api.person();
    const b = await api.person();
    const putBack = await upload(await api.pat(a.id), "/work/shared/samples/gpx/run.gpx");
    const named = await upload(await api.pat(b.id), "/work/shared/samples/gpx/run.gpx");
    const db = await api.db();
    // One put back for a second (the file workers were full); the named one being processed by another run (its 30 s lease).
    const [c1] = await claimUploads(db, { limit: 1, uploadId: putBack });
    await deferUploadClaim(db, c1!, 1);
    await claimUploads(db, { limit: 1, uploadId: named });
    const [held] = await db.select({ claimedUntil: uploads.claimedUntil }).from(uploads).where(eq(uploads.id, putBack));
    const putBackUntil = held!.claimedUntil!;
    const t = new InngestTestEngine({
      function: processUploadFn,
      events: [{ name: UPLOAD_RECEIVED, data: { upload_id: named } }],
      steps: [{ id: "wait-for-hold", handler: () => new Promise((r) => setTimeout(r, Math.max(0, putBackUntil.getTime() - Date.now()) + 300)) }],
    });
    const { result, ctx } = await t.execute();
    const [[, until]] = vi.mocked(ctx.step.sleepUntil).mock.calls as unknown as [[string, Date]];
    expect(until.getTime()).toBeGreaterThan(putBackUntil.getTime());
    expect(until.getTime()).toBeLessThan(putBackUntil.getTime() + 5_000);
    expect(result).toEqual({ outcome: "succeeded" });
    expect((await db.select().from(uploads).where(eq(uploads.id, putBack)))[0]).toMatchObject({ status: "succeeded" });
  });

  it("takes uploads in turns between athletes, whatever order their events came in", async () => {
    // Out of the way: what the sweep test above left waiting.
    await (await api.db()).update(uploads).set({ status: "failed" }).where(eq(uploads.status, "processing"));
    const season = await api.person();
    const one = await api.person();
    const seasonToken = await api.pat(season.id);
    const first = await upload(seasonToken, "/work/shared/samples/gpx/run.gpx");
    const second = await upload(seasonToken, "/work/shared/samples/gpx/missing_hr.gpx");
    const theirs = await upload(await api.pat(one.id), "/work/shared/samples/gpx/run.gpx");
    const db = await api.db();
    // The events in the order they were sent: the season's two, then the other athlete's.
    const order: string[] = [];
    for (const id of [first, second, theirs]) {
      await new InngestTestEngine({ function: processUploadFn, events: [{ name: UPLOAD_RECEIVED, data: { upload_id: id } }] }).execute();
      const done = await db.select({ id: uploads.id }).from(uploads).where(eq(uploads.status, "succeeded"));
      order.push(...done.map((d) => d.id).filter((d) => !order.includes(d) && [first, second, theirs].includes(d)));
    }
    expect(order).toEqual([first, theirs, second]);
  });

  it("an upload claimed while the file workers' queue is full is put back, and an event to take it again is sent for when its wait ends", async () => {
    await (await api.db()).update(uploads).set({ status: "failed" }).where(eq(uploads.status, "processing"));
    const a = await api.person();
    await prepareUploadOffThread(new Uint8Array(readFileSync("/work/shared/samples/gpx/run.gpx")), "gpx");
    expect(fileWorkerIsFree()).toBe(true);
    // One task holds the worker until the pool is closed; one waiting fills the queue's byte budget.
    const held = [
      runOnSharedPool({ op: "spin", ms: 120_000 }).catch((e: unknown) => e),
      runOnSharedPool({ op: "spin", ms: 1 }, DEFAULT_POOL_OPTIONS.maxQueuedBytes).catch((e: unknown) => e),
    ];
    try {
      const id = await upload(await api.pat(a.id), "/work/shared/samples/gpx/run.gpx");
      await expectTakenAgainIn(id, "deferred", BUSY_DELAY_S);
      const [row] = await (await api.db()).select().from(uploads).where(eq(uploads.id, id));
      expect(row).toMatchObject({ status: "processing", attempts: 0, failures: 0 });
    } finally {
      await closeFileWorkers();
      await Promise.all(held);
    }
  });

  it("an unexpected error puts the upload back, counted, and sends an event for when its retry is due rather than waiting for the minute's sweep", async () => {
    await (await api.db()).update(uploads).set({ status: "failed" }).where(eq(uploads.status, "processing"));
    const a = await api.person();
    const id = await upload(await api.pat(a.id), "/work/shared/samples/gpx/run.gpx");
    // The parse begun as the file arrived is dropped, and the stored file removed: reading it
    // back fails as nothing a file does (an upload processing without its file).
    takeEarlyParse(id);
    const db = await api.db();
    await db.delete(uploadFiles).where(eq(uploadFiles.uploadId, id));
    await expectTakenAgainIn(id, "retrying", retryDelayS(1));
    const [row] = await db.select().from(uploads).where(eq(uploads.id, id));
    expect(row).toMatchObject({ status: "processing", failures: 1 });
  });
});
