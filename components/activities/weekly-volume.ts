import type { TrainingSummaryWire } from "@/lib/activities/training-summary";
import { addDays, mondayOf } from "@/lib/time/local";
import type { SportType } from "./sport";

export type WeekBar = { start: string; total_m: number; total_s: number; sports: { sport: SportType; distance_m: number; moving_time_s: number; count: number }[] };

/**
 * The summary's periods as one bar per week, the weeks without activities included: `weeks`
 * Mondays ending with the one that holds `today` (a local date), oldest first.
 */
export function weekBars(summary: TrainingSummaryWire, today: string, weeks = 12): WeekBar[] {
  const current = mondayOf(today);
  const bars: WeekBar[] = Array.from({ length: weeks }, (_, i) => ({ start: addDays(current, -7 * (weeks - 1 - i)), total_m: 0, total_s: 0, sports: [] }));
  const byStart = new Map(bars.map((b) => [b.start, b]));
  for (const p of summary.periods) {
    const bar = byStart.get(p.start);
    if (!bar) continue;
    bar.sports.push({ sport: p.sport_type, distance_m: p.distance_m, moving_time_s: p.moving_time_s, count: p.count });
    bar.total_m += p.distance_m;
    bar.total_s += p.moving_time_s;
  }
  return bars;
}

/** The sports in these weeks, most time first: the legend's order and the bars' stacking order. */
export function sportsByTime(bars: WeekBar[]): SportType[] {
  const time = new Map<SportType, number>();
  for (const b of bars) for (const s of b.sports) time.set(s.sport, (time.get(s.sport) ?? 0) + s.moving_time_s);
  return [...time.entries()].sort((a, b) => b[1] - a[1]).map(([s]) => s);
}

/** On a phone every third week's date is shown under the bars, the current week's among them: twelve would overlap. */
export const PHONE_LABEL_STEP = 3;

/** Whether week `i` of `count` (oldest first) has its date under its bar on a phone, not only on a wider screen. */
export function labelledOnPhone(i: number, count: number, step = PHONE_LABEL_STEP): boolean {
  return (count - 1 - i) % step === 0;
}

/**
 * The distance axis: round values from 0 up to the first at or above `max` (in the reader's
 * units), a step of 1, 2 or 5 times a power of ten, at most `most` steps. The bars are scaled to
 * the last value, so the top line is a figure someone can read a bar against.
 */
export function distanceTicks(max: number, most = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / most;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s * most >= max)!;
  const count = Math.ceil(max / step - 1e-9);
  return Array.from({ length: count + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}
