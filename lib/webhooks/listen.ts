import "server-only";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { afterCommit } from "../db/transaction";
import { WORK_CHANNEL } from "../events/channel";
import type { Work } from "../events/notify";

type Listenable = {
  listen: (channel: string, fn: (payload: string) => void) => Promise<unknown>;
};

/**
 * LISTEN on the database behind `db` (postgres.js opens a dedicated connection and
 * re-listens after reconnecting; PGlite hears its own commits). Returns the unlisten.
 */
export async function listenForWebhookWork(db: Db, fn: (work: Work, requeued?: RequeuedSubscription) => void): Promise<() => Promise<void>> {
  const client = (db as unknown as { $client?: Partial<Listenable> }).$client;
  if (!client || typeof client.listen !== "function") return async () => {};
  const handle = await (client as Listenable).listen(WORK_CHANNEL, (payload) => fn(payload === "outbox" ? "outbox" : "queue", requeuedIn(payload)));
  return async () => {
    if (typeof handle === "function") await (handle as () => Promise<void>)();
    else if (handle && typeof (handle as { unlisten?: unknown }).unlisten === "function") await (handle as { unlisten: () => Promise<void> }).unlisten();
  };
}

/**
 * A whole subscription's deliveries queued again (a re-enable with `redeliver_failed`: a streak's
 * worth, perhaps tens of thousands), as of their version then (ms, the requeue's updated_at).
 */
export type RequeuedSubscription = { subscriptionId: string; asOf: number };

const REQUEUED = "queue:";

/**
 * `notifyWork`'s "queue" for a whole subscription requeued, once the transaction commits: the
 * local runner hears "queue" (it takes them as its slots free, as any); the Inngest runner also
 * learns which subscription, and hands all of them out (`hand-out-waiting`), not one listing's 500.
 */
export async function notifyRequeued(tx: Db, r: RequeuedSubscription): Promise<void> {
  await afterCommit(tx, `notify requeued ${r.subscriptionId}`, (db) => db.execute(sql`select pg_notify(${WORK_CHANNEL}, ${`${REQUEUED}${r.subscriptionId}:${r.asOf}`})`));
}

function requeuedIn(payload: string): RequeuedSubscription | undefined {
  if (!payload.startsWith(REQUEUED)) return undefined;
  const rest = payload.slice(REQUEUED.length);
  const at = rest.lastIndexOf(":");
  const asOf = Number(rest.slice(at + 1));
  return at > 0 && Number.isSafeInteger(asOf) ? { subscriptionId: rest.slice(0, at), asOf } : undefined;
}
