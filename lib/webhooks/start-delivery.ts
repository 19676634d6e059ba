import "server-only";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { log } from "../log";
import { startLocalRunner } from "./local-runner";

const g = globalThis as unknown as { __aasDelivery?: { stop: () => Promise<void> } };

/**
 * Starts webhook delivery for this server process, once: the local runner
 * (DELIVERY_RUNNER=local), or the notifier that tells Inngest about new events.
 */
export async function startWebhookDelivery(): Promise<void> {
  if (g.__aasDelivery) return;
  const env = getEnv();
  if (env.deliveryRunner === "local") {
    g.__aasDelivery = startLocalRunner({ db: getDb, allowPrivate: env.webhooksAllowPrivateNetworks, schedule: env.webhookRetryScheduleS });
  } else {
    const { startOutboxNotifier } = await import("../../inngest/outbox-notifier");
    g.__aasDelivery = startOutboxNotifier(getDb);
  }
  log.info("webhook delivery started", { runner: env.deliveryRunner });
}
