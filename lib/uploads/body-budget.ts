/**
 * Memory for upload bodies, shared by every request of the process: a multipart body is read
 * into memory (one buffer, sized from its `Content-Length`) and kept until its file is stored,
 * so without a bound ten 25 MiB uploads at once hold 250 MiB, and a hundred would exhaust the
 * server. A request reserves what it declares (at most the largest body an upload takes) before
 * reading a byte of it; those that do not fit wait in turn, their bodies left unread on the
 * connection, which TCP holds back at the client. A reservation is all or nothing, so waiting
 * requests never hold part of the budget and block one another. One that waits past `waitMs`
 * is told to retry (503 with `Retry-After`).
 *
 * A body that holds its room but hardly arrives (a slow or stalled client, or one trickling on
 * purpose) would make everyone behind it wait out their time and fail. So while a request
 * waits, each body being received is watched over a window (`slowWindowMs`): one whose bytes in
 * the last window would need longer than `waitMs` to bring the rest gives its room up (its
 * `evicted` signal fires; the request answers 503 and keeps nothing). Nobody waiting, nobody is
 * rushed: a slow upload on an idle server takes the time it needs.
 */
export type Reservation = {
  /** Gives the bytes back (once, however often it is called). */
  release: () => void;
  /** Counts bytes of the body as they arrive. */
  received: (bytes: number) => void;
  /** The whole body has arrived: from now on it is never rushed. */
  finished: () => void;
  /** Fires when the body arrives too slowly while others wait for room. */
  evicted: AbortSignal;
};

type Holder = {
  bytes: number;
  got: number;
  done: boolean;
  /** `got` at each of the last ticks while someone waited, oldest first. */
  seen: number[];
  abort: AbortController;
};

export type ByteBudgetOptions = {
  /** How long a body is watched before it can be found too slow. */
  slowWindowMs?: number;
  /** The wait a body's remaining bytes are held to (the waiters' own `waitMs`). */
  finishWithinMs?: number;
};

const TICKS_PER_WINDOW = 10;

export class ByteBudget {
  private free: number;
  private readonly queue: { bytes: number; grant: () => void }[] = [];
  private readonly holders = new Set<Holder>();
  private ticker: ReturnType<typeof setInterval> | null = null;
  private readonly slowWindowMs: number;
  private readonly finishWithinMs: number;

  constructor(
    readonly total: number,
    opts: ByteBudgetOptions = {},
  ) {
    this.free = total;
    this.slowWindowMs = opts.slowWindowMs ?? 10_000;
    this.finishWithinMs = opts.finishWithinMs ?? 60_000;
  }

  /** Bytes not reserved now. */
  get available(): number {
    return this.free;
  }

  /** Requests waiting for room. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Reserves `bytes` (capped at the whole budget, so one request always fits alone; anything
   * that is not a finite number counts as the whole budget) once they are free, first come
   * first served. Null if they were not free within `waitMs`.
   */
  async reserve(bytes: number, waitMs: number): Promise<Reservation | null> {
    // A size that is no number (a request without a usable length) reserves the whole budget.
    const n = Number.isFinite(bytes) ? Math.max(0, Math.min(bytes, this.total)) : this.total;
    if (this.queue.length === 0 && n <= this.free) {
      this.free -= n;
      return this.hold(n);
    }
    return new Promise((resolve) => {
      const entry = {
        bytes: n,
        grant: () => {
          clearTimeout(timer);
          resolve(this.hold(n));
        },
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(entry), 1);
        this.grantWaiting(); // the one behind it may fit
        resolve(null);
      }, waitMs);
      this.queue.push(entry);
      this.watch();
    });
  }

  private hold(n: number): Reservation {
    const holder: Holder = { bytes: n, got: 0, done: false, seen: [], abort: new AbortController() };
    this.holders.add(holder);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.holders.delete(holder);
        this.free += n;
        this.grantWaiting();
      },
      received: (bytes) => {
        holder.got += bytes;
      },
      finished: () => {
        holder.done = true;
      },
      evicted: holder.abort.signal,
    };
  }

  private grantWaiting(): void {
    while (this.queue.length && this.queue[0]!.bytes <= this.free) {
      const next = this.queue.shift()!;
      this.free -= next.bytes;
      next.grant();
    }
    if (this.queue.length === 0) this.unwatch();
  }

  /** Watches the bodies being received while anyone waits (a tick every tenth of the window). */
  private watch(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => this.tick(), this.slowWindowMs / TICKS_PER_WINDOW);
    this.ticker.unref?.();
  }

  private unwatch(): void {
    if (!this.ticker) return;
    clearInterval(this.ticker);
    this.ticker = null;
    for (const h of this.holders) h.seen = [];
  }

  private tick(): void {
    if (this.queue.length === 0) return this.unwatch();
    for (const h of this.holders) {
      if (h.done || h.abort.signal.aborted) continue;
      h.seen.push(h.got);
      if (h.seen.length <= TICKS_PER_WINDOW) continue;
      h.seen.shift();
      // Bytes over the last window, and what the rest needs at that pace.
      const perWindow = h.got - h.seen[0]!;
      const remaining = Math.max(0, h.bytes - h.got);
      if (perWindow * (this.finishWithinMs / this.slowWindowMs) < remaining) {
        h.abort.abort(new Error(`${h.got} of ${h.bytes} bytes arrived; the rest would not arrive in time.`));
      }
    }
  }
}

/** The memory all upload bodies of this process may hold at once. */
export const UPLOAD_BODY_BUDGET_BYTES = 64 * 1024 * 1024;
/** How long a request waits for room before it is asked to retry. */
export const UPLOAD_BODY_WAIT_MS = 60_000;
/** How long a body is watched, while others wait, before it can be found too slow. */
export const UPLOAD_SLOW_WINDOW_MS = 10_000;

const KEY = Symbol.for("athlete-activity-service.upload-body-budget");

/**
 * The process's budget, one for all copies of this module (Next.js bundles a module into each
 * chunk that imports it; a budget per copy would not bound anything).
 */
export function uploadBodyBudget(): ByteBudget {
  const g = globalThis as unknown as Record<symbol, ByteBudget | undefined>;
  return (g[KEY] ??= new ByteBudget(UPLOAD_BODY_BUDGET_BYTES, { slowWindowMs: UPLOAD_SLOW_WINDOW_MS, finishWithinMs: UPLOAD_BODY_WAIT_MS }));
}
