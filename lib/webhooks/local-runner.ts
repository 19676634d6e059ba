import "server-only";
import type { Db } from "../db/client";
import { log } from "../log";
import { attemptRecord, sendAttempt, type DeliveryOptions, type SentAttempt } from "./attempt-delivery";
import { claimDueDeliveries, type ClaimedDelivery } from "./claim-deliveries";
import { claimLease } from "./claim-lease";
import { isSuccess, recordAttempt, recordSuccesses, type AttemptRecorded, type Success } from "./record-attempt";
import { LOCAL_RUNNER_CONCURRENCY } from "./runner-defaults";
import { fanOutEvents } from "./fan-out";
import { listenForWebhookWork } from "./listen";
import { onWebhookWake } from "./wake";

const MAX_WAKE_TIMES = 10_000;
/** Successful attempts recorded by one statement at most. */
const MAX_RECORD_BATCH = 200;

export type LocalRunnerOptions = DeliveryOptions & {
  db: Db | (() => Promise<Db>);
  /** Attempts in flight at once, all subscriptions together. */
  concurrency?: number;
  /** The safety net: look for work this often even when nothing wakes the runner. */
  pollMs?: number;
  /** How long a claim holds unless renewed (CLAIM_LEASE_S): a killed runner's claims are free again after this. */
  leaseS?: number;
  /** LISTEN for commits of other instances (and of this one). */
  listen?: boolean;
  fanOutBatch?: number;
};

export type LocalRunner = {
  /** Look for work now. */
  wake: () => void;
  /** Stops taking work and waits for attempts in flight to be recorded. */
  stop: () => Promise<void>;
};

/**
 * DELIVERY_RUNNER=local: fan-out and delivery inside the service process, over the database.
 * It wakes when a write commits (NOTIFY), when this process queues work (`wakeWebhookRunner`),
 * when an attempt finishes or a retry falls due, and otherwise polls. Claims go through the
 * database with SKIP LOCKED and are renewed while their attempts run; they lapse within the
 * lease (CLAIM_LEASE_S) if the process dies, so several instances can run one each and a
 * killed one loses nothing and delays little.
 */
export function startLocalRunner(opts: LocalRunnerOptions): LocalRunner {
  const concurrency = opts.concurrency ?? LOCAL_RUNNER_CONCURRENCY;
  const pollMs = opts.pollMs ?? 1000;
  const batch = opts.fanOutBatch ?? 200;
  const getDb = typeof opts.db === "function" ? opts.db : () => Promise.resolve(opts.db as Db);
  // Every delivery this runner has claimed and not yet recorded has its claim renewed, so the
  // claim outlives a slow attempt but not this process.
  const lease = claimLease(getDb, { leaseS: opts.leaseS });
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let running = false;
  let again = false;
  // Fan-out runs when something may have been appended (a NOTIFY, a wake, the poll), not
  // after every attempt.
  let outboxDirty = true;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let pollAt = Infinity;
  // Every instant at which one of this process's retries falls due, soonest first: a failing
  // subscription is probed by its oldest delivery, which need not be the soonest retry.
  const dueAt: number[] = [];
  let unlisten: (() => Promise<void>) | undefined;
  let listening: Promise<void> | undefined;

  const arm = () => {
    const next = Math.min(dueAt[0] ?? Infinity, pollAt);
    if (stopped || next === timerAt) return;
    clearTimeout(timer);
    timerAt = next;
    if (next === Infinity) return;
    timer = setTimeout(fire, Math.max(0, next - Date.now()));
    timer.unref?.();
  };
  const fire = () => {
    timer = undefined;
    timerAt = Infinity;
    const now = Date.now();
    while (dueAt.length && dueAt[0]! <= now) dueAt.shift();
    if (pollAt <= now) pollAt = Infinity;
    wake();
    arm();
  };
  const wakeAt = (at: number) => {
    const t = Math.ceil(at) + 2; // timers may fire a millisecond early
    let i = dueAt.length;
    while (i > 0 && dueAt[i - 1]! > t) i--;
    if (dueAt[i - 1] !== t) dueAt.splice(i, 0, t);
    if (dueAt.length > MAX_WAKE_TIMES) dueAt.length = MAX_WAKE_TIMES; // the poll finds the rest
    arm();
  };

  const wake = () => {
    outboxDirty = true;
    refill();
  };
  const refill = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    void loop();
  };

  // Successes are recorded in batches: while one batch's statement runs, the attempts that
  // finish meanwhile queue for the next (group commit), so a lone attempt waits for nothing
  // and a busy runner makes one round trip for many. Each waits for its own record before
  // its slot is free, so a delivery is never both recorded-pending and claimed again here.
  let successes: { sent: SentAttempt; result: Success; done: (r: AttemptRecorded | null) => void; fail: (e: unknown) => void }[] = [];
  let flushing = false;
  const flushSuccesses = async (db: Db) => {
    if (flushing) return;
    flushing = true;
    try {
      while (successes.length) {
        const batch = successes.slice(0, MAX_RECORD_BATCH);
        successes = successes.slice(batch.length);
        try {
          const recorded = await recordSuccesses(
            db,
            batch.map((b) => ({ ...attemptRecord(b.sent, opts), result: b.result })),
          );
          for (const b of batch) b.done(recorded.get(b.sent.delivery.id) ?? null);
        } catch (err) {
          for (const b of batch) b.fail(err);
        }
      }
    } finally {
      flushing = false;
    }
  };
  const record = (db: Db, sent: SentAttempt): Promise<AttemptRecorded | null> => {
    const result = sent.result;
    if (!isSuccess(result)) return recordAttempt(db, attemptRecord(sent, opts));
    return new Promise((done, fail) => {
      successes.push({ sent, result, done, fail });
      void flushSuccesses(db);
    });
  };

  // A slot is free again once a successful request is answered; its record follows in a
  // batch, and until then the delivery stays locked, so it cannot be claimed again meanwhile.
  // A failure holds its slot until it is recorded: by then the subscription counts as failing,
  // so this runner claims nothing more of it but its probe.
  const recording = new Set<Promise<void>>();
  const start = (db: Db, d: ClaimedDelivery) => {
    let freeSlot: () => void = () => {};
    const slot = new Promise<void>((r) => (freeSlot = r));
    const recorded: Promise<void> = sendAttempt(d, opts)
      .then((s) => {
        if (isSuccess(s.result)) freeSlot();
        return record(db, s);
      })
      .then((r) => {
        if (r?.nextAttemptAt) wakeAt(r.nextAttemptAt.getTime());
      })
      .catch((err: unknown) => log.warn("webhook attempt not recorded; its claim will lapse", { delivery_id: d.id, error: String(err) }))
      .finally(() => {
        lease.release(d.id);
        freeSlot();
        recording.delete(recorded);
        refill();
      });
    recording.add(recorded);
    void slot.then(() => {
      inFlight.delete(slot);
      refill(); // coalesced: while a pass runs, completions only ask for one more
    });
    inFlight.add(slot);
  };

  async function loop(): Promise<void> {
    let failed = false;
    do {
      again = false;
      try {
        const db = await getDb();
        if (opts.listen !== false && !listening) {
          listening = listenForWebhookWork(db, () => wake()).then(
            (u) => {
              unlisten = u;
            },
            (err: unknown) => {
              listening = undefined;
              log.warn("webhook runner cannot LISTEN; polling only", { error: String(err) });
            },
          );
        }
        if (outboxDirty) {
          outboxDirty = false;
          while ((await fanOutEvents(db, { batch })).events === batch && !stopped);
        }
        const room = concurrency - inFlight.size - Math.max(0, recording.size - inFlight.size - concurrency);
        if (room > 0 && !stopped) {
          for (const d of await claimDueDeliveries(db, { limit: room, leaseS: opts.leaseS })) {
            // Still being attempted here (its lease ran out while this process stalled, and
            // the claim just renewed it): the attempt in flight will record it.
            if (lease.holds(d.id)) continue;
            lease.hold(d.id);
            start(db, d);
          }
        }
      } catch (err) {
        failed = true;
        outboxDirty = true;
        log.warn("webhook runner pass failed; retrying", { error: String(err) });
      }
    } while (again && !stopped && !failed);
    running = false;
    pollAt = Date.now() + pollMs;
    arm();
  }

  const offWake = onWebhookWake(wake);
  wake();
  return {
    wake,
    async stop() {
      stopped = true;
      offWake();
      clearTimeout(timer);
      await listening;
      await unlisten?.().catch(() => {});
      while (running) await new Promise((r) => setTimeout(r, 5));
      await Promise.allSettled([...inFlight, ...recording]);
      lease.stop();
    },
  };
}
