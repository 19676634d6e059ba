import "server-only";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/** The channel on which committed outbox writes announce themselves to every instance. */
export const WEBHOOK_CHANNEL = "aas_webhooks";

/** What changed: `outbox`, an event appended; `queue`, deliveries queued or put back. */
export type WebhookWork = "outbox" | "queue";

/**
 * Inside a write's transaction: PostgreSQL delivers the notification only if and when the
 * transaction commits, so a listener never wakes for an event it cannot see yet.
 */
export async function notifyWebhookWork(tx: Db, work: WebhookWork = "queue"): Promise<void> {
  await tx.execute(sql`select pg_notify(${WEBHOOK_CHANNEL}, ${work})`);
}

type Listenable = {
  listen: (channel: string, fn: (payload: string) => void) => Promise<unknown>;
};

/**
 * LISTEN on the database behind `db` (postgres.js opens a dedicated connection and
 * re-listens after reconnecting; PGlite hears its own commits). Returns the unlisten.
 */
export async function listenForWebhookWork(db: Db, fn: (work: WebhookWork) => void): Promise<() => Promise<void>> {
  const client = (db as unknown as { $client?: Partial<Listenable> }).$client;
  if (!client || typeof client.listen !== "function") return async () => {};
  const handle = await (client as Listenable).listen(WEBHOOK_CHANNEL, (payload) => fn(payload === "outbox" ? "outbox" : "queue"));
  return async () => {
    if (typeof handle === "function") await (handle as () => Promise<void>)();
    else if (handle && typeof (handle as { unlisten?: unknown }).unlisten === "function") await (handle as { unlisten: () => Promise<void> }).unlisten();
  };
}
