import "server-only";
import { perDatabase, type Db } from "../db/client";
import { addToCounters, counterKey } from "../http/rate-limit";
import { log } from "../log";

/** How often a process sends its hits to the shared counters and learns the others'. */
export const TOKEN_LIMIT_SYNC_MS = 200;

type Window = { bucket: string; windowS: number; limit: number };
type Count = {
  bucket: string;
  windowStart: Date;
  endsAt: number;
  /** The shared counter as the database last reported it (this process's sent hits included). */
  known: number;
  /** Hits on their way to the database. */
  sending: number;
  /** Hits not sent yet. */
  unsent: number;
};

/**
 * The /oauth/token and /oauth/revoke limits (CONTRACT §10: 600 a minute per client and per
 * address), decided in memory and shared through `rate_limit_counters`.
 *
 * Each hit is counted here at once, so within one process the limit is exact. The counts go to
 * the database in one statement at most every TOKEN_LIMIT_SYNC_MS after a hit, off the request
 * path, and the totals that come back include every other process's and instance's hits. The
 * bound, with several processes: a process decides on the others' hits as of its last sync, so
 * beyond the limit a window can admit what each process receives within one sync interval
 * (200 ms) of the total crossing it. Why not one upsert per request, as /v1 counts: it is a
 * write and a round trip on every token request, the larger part of what the endpoint costs
 * beyond signing (bench/README.md, oauth-token).
 */
class TokenEndpointLimiter {
  private counts = new Map<string, Count>();
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(private readonly db: Db) {}

  hit(windows: Window[], nowMs: number): { bucket: string; retryAfterS: number } | undefined {
    let over: { bucket: string; retryAfterS: number } | undefined;
    for (const w of windows) {
      const startMs = Math.floor(nowMs / (w.windowS * 1000)) * w.windowS * 1000;
      const key = `${startMs}|${w.bucket}`;
      let c = this.counts.get(key);
      if (!c) {
        c = { bucket: w.bucket, windowStart: new Date(startMs), endsAt: startMs + w.windowS * 1000, known: 0, sending: 0, unsent: 0 };
        this.counts.set(key, c);
      }
      c.unsent++;
      if (!over && c.known + c.sending + c.unsent > w.limit) {
        over = { bucket: w.bucket, retryAfterS: Math.max(1, Math.ceil((c.endsAt - nowMs) / 1000)) };
      }
    }
    this.timer ??= setTimeout(() => void this.flush(), TOKEN_LIMIT_SYNC_MS).unref();
    return over;
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    if (this.flushing) return void (this.timer ??= setTimeout(() => void this.flush(), TOKEN_LIMIT_SYNC_MS).unref());
    this.flushing = true;
    const now = Date.now();
    const batch: Count[] = [];
    for (const [key, c] of this.counts) {
      if (c.endsAt <= now && c.unsent === 0) this.counts.delete(key);
      else if (c.unsent > 0) {
        c.sending = c.unsent;
        c.unsent = 0;
        batch.push(c);
      }
    }
    try {
      if (batch.length === 0) return;
      const totals = await addToCounters(
        this.db,
        batch.map((c) => ({ bucket: c.bucket, windowStart: c.windowStart, n: c.sending })),
      );
      for (const c of batch) {
        c.known = totals.get(counterKey(c)) ?? c.known + c.sending;
        c.sending = 0;
      }
    } catch (err) {
      // Kept and sent with the next hits; meanwhile this process still counts its own.
      for (const c of batch) {
        c.unsent += c.sending;
        c.sending = 0;
      }
      log.warn("could not record /oauth/token limit counts", { error: String(err) });
    } finally {
      this.flushing = false;
    }
  }
}

const limiterOf = perDatabase((db) => new TokenEndpointLimiter(db));

/**
 * Counts one request in each window; returns the first window over its limit with the seconds
 * until it resets, or undefined.
 */
export function consumeTokenEndpointLimit(db: Db, windows: Window[], nowMs = Date.now()): { bucket: string; retryAfterS: number } | undefined {
  return limiterOf(db).hit(windows, nowMs);
}
