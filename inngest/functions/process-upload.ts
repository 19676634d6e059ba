import { getDb, type Db } from "@/lib/db/client";
import { log } from "@/lib/log";
import { claimUploads, listProcessingUploads, uploadHeldUntil, type WaitingUpload } from "@/lib/uploads/claim-uploads";
import { processUpload, takenAgainInS } from "@/lib/uploads/process-upload";
import { listenForUploads, onUploadWake } from "@/lib/uploads/wake";
import { inngest } from "../client";

/** Sent when an upload commits (or the minute's sweep finds one waiting): `data.upload_id` to process. */
export const UPLOAD_RECEIVED = "aas/upload.received";
type UploadReceivedData = { upload_id?: string };

/** Uploads one sweep hands out at most. */
const SWEEP_LIMIT = 100;

/**
 * DELIVERY_RUNNER=inngest: processes uploads with the local processor's code (claim, then
 * process: lib/uploads). An event naming an upload stands for one upload to process: the run
 * claims the next upload in turn between athletes (lib/uploads/claim-uploads.ts), which is
 * that one or one whose turn comes first, so the order is decided when a processor is free, not
 * when the events were queued (one athlete's 30 events ahead of another's one would otherwise
 * be 30 files ahead). A run that finds nothing waiting does nothing, unless its upload is still
 * held: then it waits for the first hold on any upload to end and claims once more (a few times). The minute's cron, or an event
 * naming none, sends one event per upload waiting, uploads whose processor died included once
 * their lease lapsed, each under an id that names the upload's claim state (`uploadHandedOut`).
 */
export const processUploadFn = inngest.createFunction(
  {
    id: "process-upload",
    // Infrastructure errors only: a bad file ends as a failed upload, not as a failed run.
    retries: 3,
    // Parsing is CPU work in the serving process: a few at a time keep the API answering.
    concurrency: [{ limit: 2 }],
    triggers: [{ event: UPLOAD_RECEIVED }, { cron: "* * * * *" }],
  },
  async ({ event, step }) => {
    const uploadId = (event.data as UploadReceivedData | undefined)?.upload_id;
    if (uploadId) {
      let processed = await step.run("process", async () => processNext(uploadId));
      // Its upload still held: an event sent for when a put-back's wait ends (timed by the app's
      // clock, the wait set by the database's) can come a little early, or another run took it
      // in turn and is processing it. Wait until the first hold on any upload ends (a put-back
      // of a second, not the other run's lease of 30), by the database's account, and claim once
      // more rather than leave it to the minute's sweep; a few times, while it is still held.
      for (let i = 0; i < HOLD_WAITS && "held_until" in processed; i++) {
        const suffix = i === 0 ? "" : `-${i}`;
        const until = processed.held_until;
        await step.sleepUntil(`wait-for-hold${suffix}`, new Date(Date.parse(until) + HOLD_MARGIN_MS));
        processed = await step.run(`process-after-hold${suffix}`, async () => processNext(uploadId));
      }
      // Put back (the file workers were full, or an unexpected error to retry): taken again when
      // its wait ends, not at the minute's sweep.
      if ("upload_id" in processed) {
        await step.sendEvent("retry-when-free", { ...uploadEvent(processed.upload_id), ts: Date.now() + processed.again_in_s * 1000 });
      }
      return "held_until" in processed ? { outcome: processed.outcome } : processed;
    }
    const waiting = await step.run("find-waiting", async () => listProcessingUploads(await getDb(), SWEEP_LIMIT));
    // The minute's cron under ids of its own (one per minute); a commit's sweep under the
    // uploads' versions, so an upload already handed out and not yet claimed is not again.
    const sweptAt = event.name === UPLOAD_RECEIVED ? undefined : (event.ts ?? Date.now());
    if (waiting.length) await step.sendEvent("dispatch-waiting", waiting.map((u) => uploadHandedOut(u, sweptAt)));
    return { dispatched: waiting.length };
  },
);

/** After a hold ends, how much later its upload is claimed again (the clocks of Inngest and the database differ a little). */
const HOLD_MARGIN_MS = 250;
/** Waits one run takes for holds to end (`uploadHeldUntil`) before it leaves its upload to the events and the minute's sweep. */
const HOLD_WAITS = 3;

/**
 * Claims the next upload in turn and processes it. With nothing to claim while the named
 * upload is still held, says until when (`held_until`).
 */
async function processNext(uploadId: string) {
  const db = await getDb();
  const [claimed] = await claimUploads(db, { limit: 1 });
  if (!claimed) {
    const heldUntil = await uploadHeldUntil(db, uploadId);
    return heldUntil ? { outcome: "not-claimed" as const, held_until: heldUntil.toISOString() } : { outcome: "not-claimed" as const };
  }
  const outcome = await processUpload(db, claimed);
  const againInS = takenAgainInS(outcome, claimed);
  return againInS === undefined ? { outcome } : { outcome, upload_id: claimed.id, again_in_s: againInS };
}

function uploadEvent(uploadId: string) {
  return { name: UPLOAD_RECEIVED, data: { upload_id: uploadId } satisfies UploadReceivedData };
}

/**
 * A sweep's hand-out of a waiting upload. Its id names the upload's claim state (`version`), so
 * Inngest drops a second hand-out of an upload whose first is still queued (each commit's
 * sweep lists every upload waiting: a burst of n uploads started O(n²) runs), while one put
 * back or whose claim lapsed is handed out again. The minute's cron adds its minute: a
 * hand-out whose run failed before it claimed changed nothing, and would otherwise be dropped.
 */
export function uploadHandedOut(u: WaitingUpload, sweptAt?: number) {
  const id = `upload-${u.id}-${u.version}`;
  return { ...uploadEvent(u.id), id: sweptAt === undefined ? id : `${id}-swept-${Math.floor(sweptAt / 60_000)}` };
}

/**
 * DELIVERY_RUNNER=inngest: tells Inngest when uploads commit (LISTEN on the uploads' NOTIFY),
 * with a sweep event that claims whatever waits; the function's cron covers anything missed.
 * At most one send in flight and one queued behind it.
 */
export function startUploadNotifier(getDb: () => Promise<Db>): { stop: () => Promise<void> } {
  let sending = false;
  let queued = false;
  let stopped = false;
  let unlisten: (() => Promise<void>) | undefined;
  let retry: NodeJS.Timeout | undefined;
  const send = () => {
    if (stopped) return;
    if (sending) {
      queued = true;
      return;
    }
    sending = true;
    inngest
      .send({ name: UPLOAD_RECEIVED, data: {} })
      .catch((err: unknown) => log.warn("could not tell Inngest about new uploads; its minute's sweep hands them out once Inngest answers", { error: String(err) }))
      .finally(() => {
        sending = false;
        if (queued) {
          queued = false;
          send();
        }
      });
  };
  const offWake = onUploadWake(send);
  const listen = () => {
    getDb()
      .then((db) => listenForUploads(db, send))
      .then((u) => {
        unlisten = u;
        if (stopped) void u();
      })
      .catch((err: unknown) => {
        log.warn("upload notifier cannot LISTEN yet; retrying", { error: String(err) });
        retry = setTimeout(listen, 5000);
        retry.unref();
      });
  };
  listen();
  return {
    async stop() {
      stopped = true;
      offWake();
      clearTimeout(retry);
      await unlisten?.();
    },
  };
}
