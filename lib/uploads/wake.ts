import "server-only";
import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { afterCommit } from "../db/transaction";

/** The channel on which a committed upload announces itself to every instance's processor. */
export const UPLOAD_CHANNEL = "aas_uploads";

/**
 * Once the upload's transaction has committed (afterCommit), so a processor never wakes for an
 * upload it cannot see yet; not from inside it, where the notification would make concurrent
 * uploads commit one at a time (lib/events/notify.ts says why).
 */
export async function notifyUploadWork(tx: Db): Promise<void> {
  await afterCommit(tx, "notify uploads", (db) => db.execute(sql`select pg_notify(${UPLOAD_CHANNEL}, '')`));
}

const g = globalThis as unknown as { __aasUploadWake?: EventEmitter };
const emitter = (g.__aasUploadWake ??= new EventEmitter().setMaxListeners(50));

/** In-process: uploads may be waiting (a NOTIFY heard, or a caller that knows). */
export function wakeUploadProcessor(): void {
  emitter.emit("wake");
}

export function onUploadWake(listener: () => void): () => void {
  emitter.on("wake", listener);
  return () => emitter.off("wake", listener);
}

type Listenable = { listen: (channel: string, fn: (payload: string) => void) => Promise<unknown> };

/**
 * LISTEN for committed uploads on the database behind `db` (postgres.js keeps a dedicated
 * connection and listens again after reconnecting; PGlite hears its own commits). Returns the
 * unlisten; a client that cannot listen leaves the poll to find the work.
 */
export async function listenForUploads(db: Db, fn: () => void): Promise<() => Promise<void>> {
  const client = (db as unknown as { $client?: Partial<Listenable> }).$client;
  if (!client || typeof client.listen !== "function") return async () => {};
  const handle = await (client as Listenable).listen(UPLOAD_CHANNEL, () => fn());
  return async () => {
    if (typeof handle === "function") await (handle as () => Promise<void>)();
    else if (handle && typeof (handle as { unlisten?: unknown }).unlisten === "function") await (handle as { unlisten: () => Promise<void> }).unlisten();
  };
}
