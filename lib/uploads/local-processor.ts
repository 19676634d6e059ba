import "server-only";
import type { Db } from "../db/client";
import { requestsFirst } from "../http/requests-first";
import { log } from "../log";
import { loopPasses, wakeSignal } from "../loop-passes";
import { claimUploads } from "./claim-uploads";
import { processUpload, type ProcessOptions } from "./process-upload";
import { listenForUploads, onUploadWake } from "./wake";

export type UploadProcessorOptions = ProcessOptions & {
  db: Db | (() => Promise<Db>);
  /** The safety net: look for uploads this often even when nothing wakes the processor. */
  pollMs?: number;
  /** LISTEN for uploads committed by any instance. */
  listen?: boolean;
};

export type UploadProcessor = {
  wake: () => void;
  /** Resolves after a pass that began after the call found no upload left to claim. */
  idle: () => Promise<void>;
  /** Stops taking uploads and waits for the one in hand. */
  stop: () => Promise<void>;
};

/**
 * DELIVERY_RUNNER=local: processes uploads inside the service process, one at a time (the
 * parsing runs in the file worker process, lib/files/worker; one file at a time keeps a burst of
 * uploads to one core's worth of parsing and one write transaction). Woken by each upload's commit
 * (NOTIFY, so instances hear each other's) and by a poll, which also finds uploads whose
 * processor died once their lease lapses.
 */
export function startUploadProcessor(opts: UploadProcessorOptions): UploadProcessor {
  const pollMs = opts.pollMs ?? 2000;
  const getDb = typeof opts.db === "function" ? opts.db : () => Promise.resolve(opts.db as Db);
  let stopped = false;
  const signal = wakeSignal();
  const wake = () => signal.fire();
  const passes = loopPasses(wake);
  let listening: Promise<(() => Promise<void>) | undefined> | undefined;

  const loop = async () => {
    while (!stopped) {
      const pass = passes.begin();
      // Idle: the pass found no upload left to claim (not one that failed, or deferred one).
      let idle = true;
      try {
        const db = await getDb();
        if (opts.listen !== false && !listening) {
          listening = listenForUploads(db, wake).catch((err: unknown) => {
            listening = undefined;
            log.warn("upload processor cannot LISTEN; polling only", { error: String(err) });
            return undefined;
          });
        }
        for (;;) {
          if (stopped) break;
          await requestsFirst();
          const [claimed] = await claimUploads(db, { limit: 1, leaseS: opts.leaseS });
          if (!claimed) break;
          // Deferred: the file workers are full, so the next upload would be too; wait a poll.
          if ((await processUpload(db, claimed, opts)) === "deferred") {
            idle = false;
            break;
          }
          await new Promise<void>((r) => setImmediate(r));
        }
      } catch (err) {
        idle = false;
        log.warn("upload processor pass failed; retrying", { error: String(err) });
      }
      if (idle) passes.endedIdle(pass);
      if (!stopped) await signal.wait(Date.now() + pollMs);
    }
  };

  const offWake = onUploadWake(wake);
  const done = loop();
  return {
    wake,
    idle: passes.idle,
    async stop() {
      stopped = true;
      offWake();
      wake();
      await done;
      const unlisten = await listening;
      await unlisten?.().catch(() => {});
    },
  };
}
