import "server-only";
import { perDatabase, type Db } from "../db/client";
import { addToCounters, counterKey } from "../http/rate-limit";
import { log } from "../log";

/** How often a process sends its hits to the shared counters and learns the others'. */
export const TOKEN_LIMIT_SYNC_MS = 200;

/**
 * Windows kept in memory at most. Each distinct address that calls in a minute is one, so a
 * flood from many addresses (an IPv6 prefix holds billions) must not grow the map: past the bound
 * the oldest window is forgotten. What that costs is small: a forgotten window's hits already
 * sent stay in the database, and its next sync brings the total back; only hits not yet sent
 * (at most one sync interval's) are lost.
 */
export const TOKEN_LIMIT_MAX_WINDOWS = 50_000;

export type TokenLimitWindow = { bucket: string; windowS: number; limit: number };
export type OverLimit = { bucket: string; retryAfterS: number };
type Count = {
  bucket: string;
  windowStart: Date;
  endsAt: number;
  /** The shared counter as the database last reported it (this process's sent hits included). */
  known: number;
  /** Hits on their way to the database. */
  sending: number;
  /** Hits not sent yet; negative when hits already sent were taken back. */
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
 *
 * Memory is bounded whether or not the database answers: a window that has ended is dropped at
 * the next sync even if its hits were never sent (they can no longer decide anything), and the
 * map never holds more than TOKEN_LIMIT_MAX_WINDOWS windows.
 */
export class TokenEndpointLimiter {
  private counts = new Map<string, Count>();
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(private readonly db: Db) {}

  private key(w: TokenLimitWindow, nowMs: number): { key: string; startMs: number } {
    const startMs = Math.floor(nowMs / (w.windowS * 1000)) * w.windowS * 1000;
    return { key: `${startMs}|${w.bucket}`, startMs };
  }

  private overOf(c: Count, w: TokenLimitWindow, nowMs: number, atLimit: boolean): OverLimit | undefined {
    const total = c.known + c.sending + c.unsent;
    if (atLimit ? total < w.limit : total <= w.limit) return undefined;
    return { bucket: w.bucket, retryAfterS: Math.max(1, Math.ceil((c.endsAt - nowMs) / 1000)) };
  }

  /** Whether the window is already full, as this process knows it. Counts nothing, keeps nothing. */
  full(w: TokenLimitWindow, nowMs: number): OverLimit | undefined {
    const c = this.counts.get(this.key(w, nowMs).key);
    return c && this.overOf(c, w, nowMs, true);
  }

  /** Counts one hit; returns the window when this hit takes it over its limit. */
  hit(w: TokenLimitWindow, nowMs: number): OverLimit | undefined {
    return this.add(w, 1, nowMs);
  }

  /**
   * Adds `n` hits to the window of `nowMs` (a negative `n` takes hits back, and then only from a
   * window still kept). Returns the window when it is over its limit.
   */
  add(w: TokenLimitWindow, n: number, nowMs: number): OverLimit | undefined {
    const { key, startMs } = this.key(w, nowMs);
    let c = this.counts.get(key);
    if (!c) {
      if (n <= 0) return undefined;
      if (this.counts.size >= TOKEN_LIMIT_MAX_WINDOWS) this.counts.delete(this.counts.keys().next().value!);
      c = { bucket: w.bucket, windowStart: new Date(startMs), endsAt: startMs + w.windowS * 1000, known: 0, sending: 0, unsent: 0 };
      this.counts.set(key, c);
    }
    c.unsent += n;
    this.timer ??= setTimeout(() => void this.flush(), TOKEN_LIMIT_SYNC_MS).unref();
    return this.overOf(c, w, nowMs, false);
  }

  /** Sends what is unsent and learns the totals; exported for tests, which call it directly. */
  async flush(now = Date.now()): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing) return void (this.timer ??= setTimeout(() => void this.flush(), TOKEN_LIMIT_SYNC_MS).unref());
    this.flushing = true;
    const batch: Count[] = [];
    for (const [key, c] of this.counts) {
      if (c.unsent !== 0) {
        c.sending = c.unsent;
        c.unsent = 0;
        batch.push(c);
      }
      // An ended window decides nothing more: its last hits are sent once (above), and it is
      // forgotten now, whether or not that send succeeds.
      if (c.endsAt <= now) this.counts.delete(key);
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
      // Kept and sent with the next hits (unless the window ends first); meanwhile this process
      // still counts its own.
      for (const c of batch) {
        c.unsent += c.sending;
        c.sending = 0;
      }
      log.warn("could not record /oauth/token limit counts", { error: String(err) });
    } finally {
      this.flushing = false;
    }
  }

  /** Tests: how many windows are kept. */
  get size(): number {
    return this.counts.size;
  }
}

/** The limiter of one database (one per process, shared by the token and revocation endpoints). */
export const tokenEndpointLimiter = perDatabase((db) => new TokenEndpointLimiter(db));
