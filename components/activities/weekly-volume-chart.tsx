"use client";

import { useQuery } from "@tanstack/react-query";
import { consoleFetch } from "@/components/console/api";
import { Card } from "@/components/ui/card";
import { Notice } from "@/components/ui/notice";
import type { TrainingSummaryWire } from "@/lib/activities/training-summary";
import { SPORT_LABELS, type SportType } from "./sport";
import { formatDistance, formatDuration, fromMeters, toMeters, UNIT_LABELS, type Units } from "./units";
import { SUMMARY_KEY } from "./query-keys";
import { distanceTicks, labelledOnPhone, sportsByTime, weekBars, type WeekBar } from "./weekly-volume";

// Distinct in hue and in lightness, so the stacks read apart in grey too; the legend and the
// table name every sport in words.
const SPORT_COLOURS = ["#1d4ed8", "#f59e0b", "#047857", "#be185d", "#6d28d9", "#0e7490", "#b45309", "#475569"];

// The bars are drawn in these units and stretched to the card's width at a fixed height, so a
// phone shows them as tall as a wide screen does; the dates are text beside the drawing, not in
// it, so they keep their size (12 px) however narrow the card is.
const WIDTH = 640;
const HEIGHT = 160;
const GAP = 6;
/** Room above the tallest bar, so the top line and its figure are not cut at the card's edge. */
const HEAD = 4;

/** Where a distance (in the bars' scale) sits, from the top of the drawing. */
const yOf = (value: number, top: number) => HEIGHT - (value / top) * (HEIGHT - HEAD);

/** A week's first day as the reader writes dates (the list and the usage chart do the same). */
function shortDate(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, { day: "numeric", month: "short", timeZone: "UTC" });
}

/** The last 12 weeks' distance by sport, as stacked bars, with the same figures as a table. */
export function WeeklyVolumeChart({ units, today }: { units: Units; today: string }) {
  const summary = useQuery({
    queryKey: SUMMARY_KEY,
    queryFn: () => consoleFetch<TrainingSummaryWire>("/api/console/activities/summary?group_by=week"),
  });
  if (summary.error) return <Notice tone="error">{summary.error.message}</Notice>;
  if (!summary.data) return null;
  const bars = weekBars(summary.data, today);
  const sports = sportsByTime(bars);
  if (!sports.length) return null;
  const colour = (s: SportType) => SPORT_COLOURS[sports.indexOf(s) % SPORT_COLOURS.length]!;
  // The bars are scaled to the distance axis's top line, a round figure in the reader's units.
  const ticks = distanceTicks(fromMeters(Math.max(...bars.map((b) => b.total_m)), units));
  const topUnits = ticks.at(-1)!;
  // As many decimals as the step between the figures needs (0.0002 km has four).
  const figureDigits = Math.max(0, -Math.floor(Math.log10(ticks[1]! - ticks[0]!) + 1e-9));
  const max = toMeters(topUnits, units);
  const barWidth = (WIDTH - GAP * (bars.length - 1)) / bars.length;
  const totalKm = bars.reduce((n, b) => n + b.total_m, 0);
  const totalS = bars.reduce((n, b) => n + b.total_s, 0);
  const label = `Distance per week for the last 12 weeks, by sport: ${formatDistance(totalKm, units)} in ${formatDuration(totalS)} in all.`;

  return (
    <Card title="Last 12 weeks">
      <figure className="grid grid-cols-[2.25rem_minmax(0,1fr)] gap-x-2">
        {/* The distance axis's figures, as text beside the drawing (which is stretched), each at its line. */}
        <div aria-hidden="true" className="relative h-36 text-right text-xs tabular-nums text-slate-600 sm:h-48">
          {ticks.map((t) => (
            <span key={t} className="absolute right-0 -translate-y-1/2 leading-none" style={{ top: `${(yOf(t, topUnits) / HEIGHT) * 100}%` }}>
              {t.toLocaleString(undefined, { maximumFractionDigits: figureDigits })}
            </span>
          ))}
        </div>
        <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" className="block h-36 w-full sm:h-48" role="img" aria-label={label}>
          {ticks.slice(1).map((t) => (
            <line key={t} x1={0} x2={WIDTH} y1={yOf(t, topUnits)} y2={yOf(t, topUnits)} stroke="#e2e8f0" vectorEffect="non-scaling-stroke" />
          ))}
          {bars.map((b, i) => (
            <WeekColumn key={b.start} bar={b} x={i * (barWidth + GAP)} width={barWidth} max={max} sports={sports} colour={colour} units={units} />
          ))}
        </svg>
        <div aria-hidden="true" />
        {/* One column a week, spaced as the bars are; the table below says the same in words. A date
            wider than its bar stays centred under it (a flex box overflows both ways), but the
            outer two keep to the chart's edges. */}
        <div
          aria-hidden="true"
          className="mt-1 grid text-xs text-slate-600"
          style={{ gridTemplateColumns: `repeat(${bars.length}, minmax(0, 1fr))`, columnGap: `${(GAP / WIDTH) * 100}%` }}
        >
          {bars.map((b, i) => (
            <span
              key={b.start}
              className={`flex whitespace-nowrap ${i === 0 ? "justify-start" : i === bars.length - 1 ? "justify-end" : "justify-center"} ${
                labelledOnPhone(i, bars.length) ? "" : "invisible md:visible"
              }`}
            >
              {shortDate(b.start)}
            </span>
          ))}
        </div>
        <figcaption className="col-start-2 mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700">
          {sports.map((s) => (
            <span key={s} className="inline-flex items-center gap-1">
              <span aria-hidden="true" className="inline-block h-3 w-3 rounded-sm" style={{ background: colour(s) }} />
              {SPORT_LABELS[s]}
            </span>
          ))}
          <span className="text-slate-600">Bar height: {UNIT_LABELS[units].distance} per week</span>
        </figcaption>
      </figure>
      <details className="mt-3 text-sm">
        <summary className="cursor-pointer text-slate-700">Show the weeks as a table</summary>
        <table className="mt-2 w-full text-left text-sm">
          <thead>
            <tr className="text-slate-600">
              <th scope="col" className="py-1 font-medium">Week of</th>
              <th scope="col" className="py-1 font-medium">Sport</th>
              <th scope="col" className="py-1 font-medium">Activities</th>
              <th scope="col" className="py-1 font-medium">Distance</th>
              <th scope="col" className="py-1 font-medium">Moving time</th>
            </tr>
          </thead>
          <tbody>
            {bars.flatMap((b) =>
              b.sports.map((s) => (
                <tr key={`${b.start}-${s.sport}`} className="border-t border-slate-100">
                  <td className="py-1">{shortDate(b.start)}</td>
                  <td className="py-1">{SPORT_LABELS[s.sport]}</td>
                  <td className="py-1">{s.count}</td>
                  {/* Yoga and strength record no distance: none, not "0.00 km". */}
                  <td className="py-1">{s.distance_m > 0 ? formatDistance(s.distance_m, units) : "—"}</td>
                  <td className="py-1">{formatDuration(s.moving_time_s)}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </details>
    </Card>
  );
}

function WeekColumn(props: { bar: WeekBar; x: number; width: number; max: number; sports: SportType[]; colour: (s: SportType) => string; units: Units }) {
  const { bar, x, width, max, sports, colour, units } = props;
  const parts = sports.map((s) => bar.sports.find((p) => p.sport === s)).filter((p) => p !== undefined);
  const heights = parts.map((p) => (p.distance_m / max) * (HEIGHT - HEAD));
  // Each part sits on the ones before it.
  const tops = heights.map((_, i) => HEIGHT - heights.slice(0, i + 1).reduce((n, h) => n + h, 0));
  const stacked = parts.map((p, i) => <rect key={p.sport} x={x} y={tops[i]} width={width} height={Math.max(heights[i]!, 0)} fill={colour(p.sport)} />);
  return (
    <g>
      <title>{`Week of ${shortDate(bar.start)}: ${fromMeters(bar.total_m, units).toFixed(1)} ${UNIT_LABELS[units].distance}, ${formatDuration(bar.total_s)}`}</title>
      <rect x={x} y={0} width={width} height={HEIGHT} fill="transparent" />
      {stacked}
      <line x1={x} x2={x + width} y1={HEIGHT - 0.5} y2={HEIGHT - 0.5} stroke="#94a3b8" vectorEffect="non-scaling-stroke" />
    </g>
  );
}
