import "server-only";
import type { Db } from "../db/client";
import { log } from "../log";
import { loopPasses, wakeSignal } from "../loop-passes";
import { attemptRecord, sendAttempt, type DeliveryOptions } from "./attempt-delivery";
import { claimDueDeliveries, type ClaimedDelivery } from "./claim-deliveries";
import { claimLease } from "./claim-lease";
import { fanOutEvents } from "./fan-out";
import { isSuccess, recordAttempt } from "./record-attempt";
import { listenForWebhookWork } from "./listen";
import { LOCAL_RUNNER_CONCURRENCY } from "./runner-defaults";
import { deliveryTidier } from "./tidy";
import { onWebhookWake } from "./wake";

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
  /** Vacuum the delivery tables after this many attempts (tidy.ts). */
  tidyEveryAttempts?: number;
};

/**
 * An attempt whose subscriber has not answered within this long gives its slot to the next
 * delivery and goes on waiting (up to the 10 s timeout) outside the slots, so a few slow
 * endpoints, each answering just inside the timeout and so never counted as failing, cannot
 * hold every slot: each subscription still has at most MAX_IN_FLIGHT_PER_SUBSCRIPTION in
 * flight. At most SLOW_ATTEMPTS_PER_SLOT × concurrency such attempts wait at once (an open
 * socket each); past that, slow ones keep their slots as before.
 */
const SLOW_ATTEMPT_MS = 2_000;
const SLOW_ATTEMPTS_PER_SLOT = 8;

export type LocalRunner = {
  /** Look for work now. */
  wake: () => void;
  /**
   * Resolves after a pass that began after the call (fan-out, then a claim) ended with no
   * attempt in flight: everything due by then has been attempted and recorded.
   */
  idle: () => Promise<void>;
  /** Stops taking work and waits for attempts in flight to be recorded. */
  stop: () => Promise<void>;
};

/**
 * DELIVERY_RUNNER=local: fan-out and delivery inside the service process, over the database.
 * One loop: fan out new events, claim what the policy lets go (claim-deliveries.ts), start an
 * attempt for each (send, then record: record-attempt.ts), and sleep until something wakes it:
 * a write's commit (NOTIFY, so other instances hear it too), this process queueing work
 * (`wakeWebhookRunner`), an attempt finishing, one of its retries falling due, or the poll.
 * Claims are leases, renewed while their attempts run (claim-lease.ts): if the process dies
 * they lapse and another instance takes them, so several instances can run one each.
 */
export function startLocalRunner(opts: LocalRunnerOptions): LocalRunner {
  const concurrency = opts.concurrency ?? LOCAL_RUNNER_CONCURRENCY;
  const pollMs = opts.pollMs ?? 1000;
  const batch = opts.fanOutBatch ?? 200;
  const getDb = typeof opts.db === "function" ? opts.db : () => Promise.resolve(opts.db as Db);
  const lease = claimLease(getDb, { leaseS: opts.leaseS });
  const tidy = deliveryTidier({ everyAttempts: opts.tidyEveryAttempts });
  /** Attempts until recorded, the slots they hold until answered, and those waiting slowly without one. */
  const attempts = new Set<Promise<void>>();
  const slots = new Set<Promise<void>>();
  const slow = new Set<string>();
  const retries = dueTimes();
  const signal = wakeSignal();
  let relook = false;
  let stopped = false;
  // Fan-out runs when something may have been appended (a NOTIFY, a wake, the poll), not
  // after every attempt.
  let outboxDirty = true;
  let lastFanOut = -Infinity;
  let fanOutDue = Infinity;
  let listening: Promise<(() => Promise<void>) | undefined> | undefined;

  const wake = () => {
    outboxDirty = true;
    signal.fire();
  };
  const passes = loopPasses(wake);

  // An attempt holds one of the `concurrency` slots until its answer: a success frees it at
  // once (its record only ends the claim, and waits to be batched with others'), a failure once
  // it is recorded (by then its subscription counts as failing, and only its probe is claimed),
  // and one not answered within SLOW_ATTEMPT_MS when it goes on waiting.
  // The claim stays in place until the record, so the delivery is not claimed again meanwhile.
  const start = (db: Db, d: ClaimedDelivery) => {
    lease.hold(d.id);
    let freeSlot = () => {};
    const slot = new Promise<void>((r) => (freeSlot = r));
    const slowTimer = setTimeout(() => {
      if (slow.size >= SLOW_ATTEMPTS_PER_SLOT * concurrency) return;
      slow.add(d.id);
      freeSlot();
    }, SLOW_ATTEMPT_MS);
    const answered = () => {
      clearTimeout(slowTimer);
      slow.delete(d.id);
    };
    const attempt = (async () => {
      try {
        const sent = await sendAttempt(d, opts);
        answered();
        if (isSuccess(sent.result)) freeSlot();
        const recorded = await recordAttempt(db, attemptRecord(sent, opts));
        if (recorded?.nextAttemptAt) retries.add(recorded.nextAttemptAt.getTime());
        void tidy.recorded(db);
      } catch (err) {
        log.warn("webhook attempt not recorded; its claim will lapse", { delivery_id: d.id, error: String(err) });
      } finally {
        answered();
        lease.release(d.id);
        freeSlot();
      }
    })();
    slots.add(slot);
    attempts.add(attempt);
    void slot.then(() => {
      slots.delete(slot);
      signal.fire();
    });
    void attempt.then(() => {
      attempts.delete(attempt);
      signal.fire();
    });
  };

  const listen = (db: Db) => {
    if (opts.listen === false || listening) return;
    listening = listenForWebhookWork(db, wake).catch((err: unknown) => {
      listening = undefined; // the next pass tries again
      log.warn("webhook runner cannot LISTEN; polling only", { error: String(err) });
      return undefined;
    });
  };

  const loop = async () => {
    while (!stopped) {
      const pass = passes.begin();
      let failed = false;
      try {
        const db = await getDb();
        listen(db);
        // At most one fan-out per FAN_OUT_EVERY_MS: under a burst of writes each commit's
        // NOTIFY would otherwise cost a fan-out transaction of its own.
        fanOutDue = outboxDirty ? lastFanOut + FAN_OUT_EVERY_MS : Infinity;
        if (fanOutDue <= Date.now()) {
          outboxDirty = false;
          fanOutDue = Infinity;
          lastFanOut = Date.now();
          while ((await fanOutEvents(db, { batch })).events === batch && !stopped);
        }
        const retriesDue = retries.dropUntil(Date.now());
        // Records waiting beyond one slot's worth each take a slot too: a database slower
        // than the subscribers must not gather an unbounded queue of them.
        const unrecorded = Math.max(0, attempts.size - slots.size - slow.size - concurrency);
        const room = stopped ? 0 : concurrency - slots.size - unrecorded;
        // While busy, claim a quarter of the slots at a time rather than one per answer: the
        // claim statement costs about the same whatever it takes.
        const worthIt = room > 0 && (slots.size === 0 || room >= Math.ceil(concurrency / 4));
        const claimed = worthIt ? await claimDueDeliveries(db, { limit: room, leaseS: opts.leaseS, stillHeld: (id) => lease.holds(id) }) : [];
        for (const d of claimed) {
          // Still being attempted here (its lease ran out while this process stalled, and the
          // claim just renewed it): the attempt in flight will record it.
          if (!lease.holds(d.id)) start(db, d);
        }
        // A retry that fell due can be passed over for an instant while another transaction
        // holds its row (the claim skips locked rows): look once more shortly after, rather
        // than leave it to the poll.
        relook = retriesDue > 0 && worthIt && !claimed.length && !relook;
        if (relook) retries.add(Date.now() + RELOOK_MS);
      } catch (err) {
        failed = true;
        outboxDirty = true;
        log.warn("webhook runner pass failed; retrying", { error: String(err) });
      }
      // Idle: nothing in flight, and no fan-out left waiting for its turn.
      if (!attempts.size && !failed && !outboxDirty) passes.endedIdle(pass);
      // After a failed pass only the poll (or a wake) tries again.
      await signal.wait(Math.min(failed ? Infinity : Math.min(retries.next(), fanOutDue), Date.now() + pollMs));
    }
  };

  const offWake = onWebhookWake(wake);
  const done = loop();
  return {
    wake,
    idle: passes.idle,
    async stop() {
      stopped = true;
      offWake();
      signal.fire();
      await done;
      await Promise.allSettled([...attempts]);
      await tidy.settled();
      lease.stop();
      const unlisten = await listening;
      await unlisten?.().catch(() => {});
    },
  };
}

const MAX_DUE_TIMES = 10_000;
const RELOOK_MS = 100;
const FAN_OUT_EVERY_MS = 10;

/**
 * The instants at which this runner's retries fall due, soonest first: a failing subscription
 * is probed by its oldest delivery, which need not be the soonest retry, so all are kept (up
 * to a bound: the poll finds the rest).
 */
function dueTimes() {
  const at: number[] = [];
  return {
    add(t: number) {
      const due = Math.ceil(t) + 2; // timers may fire a millisecond early
      let i = at.length;
      while (i > 0 && at[i - 1]! > due) i--;
      if (at[i - 1] !== due) at.splice(i, 0, due);
      if (at.length > MAX_DUE_TIMES) at.length = MAX_DUE_TIMES;
    },
    /** Forgets the instants up to `now`; says how many there were. */
    dropUntil(now: number): number {
      let n = 0;
      for (; at.length && at[0]! <= now; n++) at.shift();
      return n;
    },
    next: () => at[0] ?? Infinity,
  };
}
