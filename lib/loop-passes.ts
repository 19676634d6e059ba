/**
 * What the service's two background loops (the webhook runner, lib/webhooks/local-runner.ts, and
 * the upload processor, lib/uploads/local-processor.ts) share: sleeping between passes until
 * woken, and telling callers of `idle()` when a pass found nothing left to do.
 */

/** Wakes a loop that sleeps between passes; a wake that comes while a pass runs is kept for when it ends. */
export function wakeSignal() {
  let woken = false;
  let resolve: (() => void) | undefined;
  return {
    fire() {
      woken = true;
      resolve?.();
    },
    /** Until a wake, or the instant `at` (ms since the epoch). */
    async wait(at: number): Promise<void> {
      if (!woken) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((r) => {
          resolve = r;
          timer = setTimeout(r, Math.max(0, at - Date.now()));
          timer.unref?.();
        });
        clearTimeout(timer);
        resolve = undefined;
      }
      woken = false;
    },
  };
}

/**
 * A loop's passes, counted, and the callers waiting for it to be idle: `idle()` resolves after a
 * pass that began after the call ended with nothing left (`endedIdle`), so work queued before the
 * call has been seen by then.
 */
export function loopPasses(wake: () => void) {
  let passes = 0;
  const waiters: { after: number; resolve: () => void }[] = [];
  return {
    /** Starts a pass; its number goes to `endedIdle` if it ends idle. */
    begin: () => ++passes,
    endedIdle(pass: number) {
      for (const w of waiters.filter((w) => w.after < pass)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    idle(): Promise<void> {
      return new Promise((resolve) => {
        waiters.push({ after: passes, resolve });
        wake();
      });
    },
  };
}
