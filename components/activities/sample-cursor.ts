// The sample under the charts' cursor, shared with the route map. A small store rather than
// React state in the page: the cursor moves with every mouse move, and only the route's marker
// should draw again, not the page with its charts.

export type SampleCursor = {
  /** The sample (an index into the streams) under the cursor, or null while there is none. */
  get: () => number | null;
  set: (sample: number | null) => void;
  subscribe: (listener: () => void) => () => void;
};

export function createSampleCursor(): SampleCursor {
  let sample: number | null = null;
  const listeners = new Set<() => void>();
  return {
    get: () => sample,
    set: (next) => {
      if (next === sample) return;
      sample = next;
      for (const l of listeners) l();
    },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
