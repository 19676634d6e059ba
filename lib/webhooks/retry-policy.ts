/** CONTRACT §7: the wait after failed attempt n (1-based), before ±20 % jitter. */
export const DEFAULT_RETRY_SCHEDULE_S = [10, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200];
export const MAX_ATTEMPTS = 20;
export const DISABLE_AFTER_FAILURES = 20;
export const FAILING_AFTER_FAILURES = 10;

/**
 * Seconds to wait after failed attempt `attempt`, or null when no attempt is left. Past the
 * schedule's end its last step repeats (every 12 hours). `random` is in [0, 1).
 */
export function retryDelayS(
  attempt: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_S,
  random: () => number = Math.random,
): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const base = schedule[Math.min(attempt, schedule.length) - 1] ?? schedule[schedule.length - 1] ?? 0;
  const jitter = 1 + (random() * 0.4 - 0.2);
  return Math.max(0, base * jitter);
}
