/**
 * Requests first, bulk work after. The server has one JavaScript thread: an upload's body, its
 * file's save and the like (bulk work, which nobody waits on by the millisecond) run on it
 * between requests, and a request that arrives behind a queue of such steps waits for all of
 * them. So each bulk step asks `requestsFirst()` before it starts, and goes only once no
 * request is being answered (the `/v1` and console wrappers, the OAuth endpoints and `/mcp`
 * count theirs). Held steps go one per turn of the event loop, so a request that
 * arrives between two of them goes before the second.
 *
 * A step never waits longer than `maxWaitMs`: a steady stream of requests slows bulk work but
 * cannot stop it. A request counts from when its handler starts until it has its answer
 * (`requestStarted()`'s end), except while its body is still arriving (`notWhile`); what the
 * thread does for it before and after (Next.js's routing, writing the answer) is short and not
 * counted.
 */

/** The longest a bulk step waits. */
export const BULK_MAX_WAIT_MS = 200;

type Waiter = { go: () => void; timer: NodeJS.Timeout };

type State = {
  inFlight: number;
  waiting: Waiter[];
  /** A turn of the loop is already asked for. */
  scheduled: boolean;
};

const KEY = Symbol.for("athlete-activity-service.requests-first");
/** One state for all copies of this module (Next.js bundles a module into each chunk that imports it). */
const state: State = ((globalThis as unknown as Record<symbol, State | undefined>)[KEY] ??= { inFlight: 0, waiting: [], scheduled: false });

/**
 * A request being answered: call it once answered (later calls do nothing). `notWhile` runs
 * something the request waits on that is not the thread's work, such as its body arriving from
 * the client, without counting the request meanwhile: a client that sends its body slowly (or
 * stalls) would otherwise hold every bulk step for its `maxWaitMs`, everyone's uploads with it.
 */
export type Answering = (() => void) & { notWhile<T>(run: () => Promise<T>): Promise<T> };

/** Counts a request as being answered until the returned function is called. */
export function requestStarted(): Answering {
  state.inFlight++;
  let counted = true;
  let ended = false;
  const uncount = () => {
    if (!counted) return;
    counted = false;
    state.inFlight--;
    if (state.inFlight === 0) schedule();
  };
  const end = (() => {
    ended = true;
    uncount();
  }) as Answering;
  end.notWhile = async (run) => {
    uncount();
    try {
      return await run();
    } finally {
      if (!ended && !counted) {
        counted = true;
        state.inFlight++;
      }
    }
  };
  return end;
}

/** Resolves once no request is being answered (at once when none is and no other bulk step waits), or after `maxWaitMs`. */
export function requestsFirst(maxWaitMs = BULK_MAX_WAIT_MS): Promise<void> {
  if (state.waiting.length === 0 && state.inFlight === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const waiter: Waiter = {
      go: () => {
        clearTimeout(waiter.timer);
        resolve();
      },
      timer: setTimeout(() => {
        state.waiting.splice(state.waiting.indexOf(waiter), 1);
        resolve();
      }, maxWaitMs),
    };
    state.waiting.push(waiter);
    if (state.inFlight === 0) schedule();
  });
}

/** Bulk steps held now. */
export function bulkStepsWaiting(): number {
  return state.waiting.length;
}

/** Requests being answered now. */
export function requestsInFlight(): number {
  return state.inFlight;
}

/** On a later turn of the loop, lets the first held step go if no request is being answered then, and the next on the turn after. */
function schedule(): void {
  if (state.scheduled || state.waiting.length === 0) return;
  state.scheduled = true;
  setImmediate(() => {
    state.scheduled = false;
    // A request being answered: its end schedules the next turn.
    if (state.inFlight > 0) return;
    state.waiting.shift()?.go();
    schedule();
  });
}
