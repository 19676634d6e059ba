import { isDatabaseUnavailable } from "../http/db-errors";

/**
 * Work for the database that goes in batches: while one batch's statement is on its way, what
 * arrives waits and goes together in the next one. Nothing waits for a timer: the first entry
 * after a quiet spell is sent in the same turn of the event loop, so a lone request pays no
 * delay, and under load one statement (one write, one read, one execution in PostgreSQL)
 * serves every request that arrived during the last round trip.
 *
 * Entries are keyed: requests for the same key share one entry (a client's concurrent requests
 * with one token are looked up once). If a batch's statement fails for any reason but an
 * unreachable database, its entries are sent again one statement each, so an entry that cannot
 * be served fails only its own requests, never the others that shared its batch.
 */
export class InFlightBatcher<K, E> {
  private pending = new Map<K, E>();
  private flushing = false;

  constructor(
    private readonly ops: {
      /** Sends one batch and settles its entries; throws only when the statement failed. */
      send: (batch: Map<K, E>) => Promise<void>;
      /** Settles an entry whose statement failed. */
      fail: (entry: E, err: unknown) => void;
    },
  ) {}

  /** The waiting batch's entry for `key`, made by `make` if it has none yet. */
  entryFor(key: K, make: () => E): E {
    let entry = this.pending.get(key);
    if (entry === undefined) {
      entry = make();
      this.pending.set(key, entry);
    }
    if (!this.flushing) {
      this.flushing = true;
      // Entries added in the same turn of the event loop join this batch.
      queueMicrotask(() => void this.flush());
    }
    return entry;
  }

  /**
   * Sends batches until none is waiting. `flushing` is cleared in the same synchronous step
   * that finds nothing pending: an entry added in between would otherwise see a flush still
   * "running", not start one, and wait forever. Nothing in the loop throws (a statement's
   * failure is handed to its entries), so the flag cannot be left set.
   */
  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = this.pending;
      this.pending = new Map();
      await this.sendSplitting(batch);
    }
    this.flushing = false;
  }

  private async sendSplitting(batch: Map<K, E>): Promise<void> {
    try {
      await this.ops.send(batch);
    } catch (err) {
      if (batch.size === 1 || isDatabaseUnavailable(err)) {
        for (const entry of batch.values()) this.ops.fail(entry, err);
        return;
      }
      for (const [key, entry] of batch) await this.sendSplitting(new Map([[key, entry]]));
    }
  }
}

type Waiter<V> = { resolve: (value: V | undefined) => void; reject: (err: unknown) => void };

/**
 * A lookup by key that goes in batches (InFlightBatcher): `load` reads every key of a batch in
 * one statement, given the keys as a JSON array (`keysAsJson`, for `jsonb_array_elements_text`),
 * and returns the rows it found; `keyOf` names each row's key. A key with no row is
 * `undefined`. Requests for the same key in one batch share its row: treat it as read-only.
 */
export function batchedLookup<V>(load: (keysJson: string) => Promise<V[]>, keyOf: (row: V) => string): (key: string) => Promise<V | undefined> {
  const batcher = new InFlightBatcher<string, Waiter<V>[]>({
    send: async (batch) => {
      const found = new Map((await load(keysAsJson([...batch.keys()]))).map((row) => [keyOf(row), row]));
      for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
    },
    fail: (waiters, err) => {
      for (const w of waiters) w.reject(err);
    },
  });
  return (key) => new Promise((resolve, reject) => batcher.entryFor(key, () => []).push({ resolve, reject }));
}

/**
 * Keys as the JSON array a batched statement reads with `jsonb_array_elements_text`, leaving
 * out the keys no text column can hold (a NUL, a lone surrogate): they match no row, and
 * PostgreSQL would refuse the whole array for them.
 */
export function keysAsJson(keys: readonly string[]): string {
  return JSON.stringify(keys.filter((k) => !/[\p{Cs}\u0000]/u.test(k)));
}
