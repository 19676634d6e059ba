import { getDb, type Db } from "@/lib/db/client";
import { log } from "@/lib/log";
import { claimUploads, listProcessingUploads } from "@/lib/uploads/claim-uploads";
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
 * be 30 files ahead). A run that finds nothing waiting does nothing. The minute's cron, or an
 * event naming none, sends one event per upload waiting, uploads whose processor died included
 * once their lease lapsed.
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
      const processed = await step.run("process", async () => {
        const db = await getDb();
        const [claimed] = await claimUploads(db, { limit: 1 });
        if (!claimed) return { outcome: "not-claimed" as const };
        const outcome = await processUpload(db, claimed);
        const againInS = takenAgainInS(outcome, claimed);
        return againInS === undefined ? { outcome } : { outcome, upload_id: claimed.id, again_in_s: againInS };
      });
      // Put back (the file workers were full, or an unexpected error to retry): taken again when
      // its wait ends, not at the minute's sweep.
      if ("upload_id" in processed) {
        await step.sendEvent("retry-when-free", { ...uploadReceived(processed.upload_id), ts: Date.now() + processed.again_in_s * 1000 });
      }
      return processed;
    }
    const waiting = await step.run("find-waiting", async () => listProcessingUploads(await getDb(), SWEEP_LIMIT));
    if (waiting.length) await step.sendEvent("dispatch-waiting", waiting.map(uploadReceived));
    return { dispatched: waiting.length };
  },
);

function uploadReceived(uploadId: string) {
  return { name: UPLOAD_RECEIVED, data: { upload_id: uploadId } satisfies UploadReceivedData };
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
