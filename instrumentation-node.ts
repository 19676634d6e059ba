// The Node.js server's start (instrumentation.ts imports it only in the Node.js runtime, so the
// Edge build never sees the database or the file worker): migrate, seed the demo world, start workers.
export async function registerNode() {
  // A bad setting stops the service with a message naming it (README "Configuration"). Thrown
  // from here, Next.js would log it and serve anyway, with a plain 500 for every request.
  const { getEnv: settings } = await import("./lib/env");
  try {
    settings();
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
  const { boot } = await import("./lib/boot");
  await boot();
  registerShutdown();
  // Webhook delivery retries the database by itself, so it starts even when that is down. The
  // process entry picks the runner: lib/webhooks knows neither the local runner's start nor inngest/.
  const { getEnv } = await import("./lib/env");
  const { getDb } = await import("./lib/db/client");
  const { log } = await import("./lib/log");
  const g = globalThis as unknown as { __aasDelivery?: { stop: () => Promise<void> } };
  if (g.__aasDelivery) return;
  const env = getEnv();
  if (env.deliveryRunner === "local") {
    const { startLocalRunner } = await import("./lib/webhooks/local-runner");
    g.__aasDelivery = startLocalRunner({ db: getDb, allowPrivate: env.webhooksAllowPrivateNetworks, schedule: env.webhookRetryScheduleS });
  } else {
    const { startOutboxNotifier } = await import("./inngest/outbox-notifier");
    g.__aasDelivery = startOutboxNotifier(getDb);
  }
  log.info("webhook delivery started", { runner: env.deliveryRunner });
  await startUploadProcessing(env.deliveryRunner);
}

/** Uploads are processed on the same runner as webhook delivery: in this process, or by Inngest. */
async function startUploadProcessing(runner: "local" | "inngest") {
  const { getDb } = await import("./lib/db/client");
  const { log } = await import("./lib/log");
  const g = globalThis as unknown as { __aasUploads?: { stop: () => Promise<void> } };
  if (g.__aasUploads) return;
  if (runner === "local") {
    const { startUploadProcessor } = await import("./lib/uploads/local-processor");
    g.__aasUploads = startUploadProcessor({ db: getDb });
  } else {
    const { startUploadNotifier } = await import("./inngest/functions/process-upload");
    g.__aasUploads = startUploadNotifier(getDb);
  }
  log.info("upload processing started", { runner });
  const { prewarmFileWorkers } = await import("./lib/files/worker/pool");
  prewarmFileWorkers();
}

/**
 * What scripts/server.mjs calls once a stop's requests in flight are answered: the runners stop
 * (each records the attempts and uploads it has under way, or leaves them to their leases), the
 * file workers end, and the database closes, so the embedded one's files are left consistent.
 */
function registerShutdown() {
  const g = globalThis as unknown as Record<symbol, (() => Promise<void>) | undefined> & {
    __aasDelivery?: { stop: () => Promise<void> };
    __aasUploads?: { stop: () => Promise<void> };
  };
  g[Symbol.for("athlete-activity-service.shutdown")] = async () => {
    // Start-up's retries, seeding and housekeeping end first: none may reopen the database once it is closed.
    const { stopBoot } = await import("./lib/boot");
    stopBoot();
    await Promise.allSettled([g.__aasDelivery?.stop(), g.__aasUploads?.stop()]);
    const { closeFileWorkers } = await import("./lib/files/worker/pool");
    const { closeDb } = await import("./lib/db/client");
    await closeFileWorkers();
    await closeDb();
    const { log } = await import("./lib/log");
    log.info("stopped: work under way recorded or left to its lease, database closed");
  };
}
