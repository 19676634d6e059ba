/**
 * The local runner's defaults, in a module without server-only imports so the benchmark can
 * give its bare sender the same concurrency.
 */
/**
 * Attempts in flight at once, all subscriptions together (each subscription holds at most
 * MAX_IN_FLIGHT_PER_SUBSCRIPTION of them). 32 rather than 16: the runner claims a quarter of
 * its slots at a time, so its claims are twice the size, and side by side on the 2-core host
 * the runner delivered 793–879 /s against 573–709 /s, with less CPU per delivery in the service
 * (0.88–0.98 against 1.03–1.34 ms) and in PostgreSQL (0.59–0.65 against 0.80–0.91 ms;
 * bench/README.md, "webhooks").
 */
export const LOCAL_RUNNER_CONCURRENCY = 32;
