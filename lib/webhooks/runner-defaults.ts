/**
 * The local runner's defaults, in a module without server-only imports so the benchmark can
 * give its bare sender the same concurrency.
 */
/** Attempts in flight at once, all subscriptions together. */
export const LOCAL_RUNNER_CONCURRENCY = 16;
