import "server-only";
import type { Db } from "./client";
import { log } from "../log";

declare const opened: unique symbol;

/**
 * An open transaction, as only `inTransaction` hands it out. It is a `Db` for every query
 * function, but `transaction` is `never` on it: a write verb runs inside the transaction its
 * caller opened and cannot open another (drizzle would turn it into a savepoint), and a plain
 * `Db` is not a `Tx`, so a verb that needs one cannot be called outside a transaction.
 */
export type Tx = Db & { readonly transaction: never; readonly [opened]: true };

/** What each transaction opened by inTransaction does once it has committed, by key. */
const committed = new WeakMap<object, Map<string, (db: Db) => Promise<unknown>>>();

/**
 * The one way to open a write's transaction: the route wrappers (`handle`, `consoleHandler`)
 * call it for every write, and so does anything else that calls a write verb (seed, sign-up,
 * tests). Everything `fn` sends commits together or not at all; the steps it asked for with
 * `afterCommit` then run, before this returns.
 */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const after = new Map<string, (db: Db) => Promise<unknown>>();
  const result = await db.transaction((tx) => {
    committed.set(tx, after);
    return fn(tx as unknown as Tx);
  });
  for (const [key, step] of after) {
    try {
      await step(db);
    } catch (err) {
      // The write has committed: its answer stands, and what the step was for has a fallback.
      log.warn("a step after a commit failed", { step: key, error: String(err) });
    }
  }
  return result;
}

/**
 * Runs `step` once `tx` has committed, on the database it was opened on, once per `key` however
 * often it is asked for; never if `tx` rolls back. A step that fails is logged: the commit
 * stands. Given a `Db` that is not a transaction inTransaction opened (a plain database, or a
 * transaction opened some other way), `step` runs at once on it.
 */
export async function afterCommit(tx: Db, key: string, step: (db: Db) => Promise<unknown>): Promise<void> {
  const after = committed.get(tx);
  if (!after) {
    await step(tx);
    return;
  }
  if (!after.has(key)) after.set(key, step);
}
