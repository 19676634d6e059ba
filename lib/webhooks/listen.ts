import "server-only";
import type { Db } from "../db/client";
import { WORK_CHANNEL } from "../events/channel";
import type { Work } from "../events/notify";

type Listenable = {
  listen: (channel: string, fn: (payload: string) => void) => Promise<unknown>;
};

/**
 * LISTEN on the database behind `db` (postgres.js opens a dedicated connection and
 * re-listens after reconnecting; PGlite hears its own commits). Returns the unlisten.
 */
export async function listenForWebhookWork(db: Db, fn: (work: Work) => void): Promise<() => Promise<void>> {
  const client = (db as unknown as { $client?: Partial<Listenable> }).$client;
  if (!client || typeof client.listen !== "function") return async () => {};
  const handle = await (client as Listenable).listen(WORK_CHANNEL, (payload) => fn(payload === "outbox" ? "outbox" : "queue"));
  return async () => {
    if (typeof handle === "function") await (handle as () => Promise<void>)();
    else if (handle && typeof (handle as { unlisten?: unknown }).unlisten === "function") await (handle as { unlisten: () => Promise<void> }).unlisten();
  };
}
