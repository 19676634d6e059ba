import "server-only";
import type { Db } from "./client";

declare const opened: unique symbol;

/**
 * An open transaction, as only `inTransaction` hands it out. It is a `Db` for every query
 * function, but `transaction` is `never` on it: a write verb runs inside the transaction its
 * caller opened and cannot open another (drizzle would turn it into a savepoint), and a plain
 * `Db` is not a `Tx`, so a verb that needs one cannot be called outside a transaction.
 */
export type Tx = Db & { readonly transaction: never; readonly [opened]: true };

/**
 * The one way to open a write's transaction: the route wrappers (`handle`, `consoleHandler`)
 * call it for every write, and so does anything else that calls a write verb (seed, sign-up,
 * tests). Everything `fn` sends commits together or not at all.
 */
export function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction((tx) => fn(tx as unknown as Tx));
}
