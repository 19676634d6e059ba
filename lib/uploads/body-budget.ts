/**
 * Memory for upload bodies, shared by every request of the process: a multipart body is read
 * into memory (one buffer, sized from its `Content-Length`) and kept until its file is stored,
 * so without a bound ten 25 MiB uploads at once hold 250 MiB, and a hundred would exhaust the
 * server. A request reserves what it declares (at most the largest body an upload takes) before
 * reading a byte of it; those that do not fit wait in turn, their bodies left unread on the
 * connection, which TCP holds back at the client. A reservation is all or nothing, so waiting
 * requests never hold part of the budget and block one another. One that waits past `waitMs`
 * is told to retry (503 with `Retry-After`).
 */
export class ByteBudget {
  private free: number;
  private readonly queue: { bytes: number; grant: () => void }[] = [];

  constructor(readonly total: number) {
    this.free = total;
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
 * that is not a finite number counts as the whole budget) once they
   * are free, first come first served; the release gives them back (once, however often it is
   * called). Null if they were not free within `waitMs`.
   */
  async reserve(bytes: number, waitMs: number): Promise<(() => void) | null> {
    // A size that is no number (a request without a usable length) reserves the whole budget.
    const n = Number.isFinite(bytes) ? Math.max(0, Math.min(bytes, this.total)) : this.total;
    if (this.queue.length === 0 && n <= this.free) {
      this.free -= n;
      return this.releaser(n);
    }
    return new Promise((resolve) => {
      const entry = {
        bytes: n,
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser(n));
        },
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(entry), 1);
        this.grantWaiting(); // the one behind it may fit
        resolve(null);
      }, waitMs);
      this.queue.push(entry);
    });
  }

  private releaser(n: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free += n;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    while (this.queue.length && this.queue[0]!.bytes <= this.free) {
      const next = this.queue.shift()!;
      this.free -= next.bytes;
      next.grant();
    }
  }
}

/** The memory all upload bodies of this process may hold at once. */
export const UPLOAD_BODY_BUDGET_BYTES = 64 * 1024 * 1024;
/** How long a request waits for room before it is asked to retry. */
export const UPLOAD_BODY_WAIT_MS = 60_000;

const KEY = Symbol.for("athlete-activity-service.upload-body-budget");

/**
 * The process's budget, one for all copies of this module (Next.js bundles a module into each
 * chunk that imports it; a budget per copy would not bound anything).
 */
export function uploadBodyBudget(): ByteBudget {
  const g = globalThis as unknown as Record<symbol, ByteBudget | undefined>;
  return (g[KEY] ??= new ByteBudget(UPLOAD_BODY_BUDGET_BYTES));
}
