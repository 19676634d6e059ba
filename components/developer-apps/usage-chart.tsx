"use client";

import { useEffect, useId, useRef, useState } from "react";

type Day = { date: string; requests: number };

const H = 220;
const PAD = { top: 12, right: 8, bottom: 28, left: 44 };

/** A round ceiling for the axis, close above the highest bar, whose half is a whole number too. */
export function niceMax(n: number): number {
  if (n <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    const top = Math.round(m * p);
    if (top >= n && top % 2 === 0) return top;
  }
  return 10 * p;
}

/** "21 Nov" for a UTC `YYYY-MM-DD`. */
export function shortDay(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, { day: "numeric", month: "short", timeZone: "UTC" });
}

/** "1 request", "2 requests". */
function requests(n: number): string {
  return `${n.toLocaleString("en")} ${n === 1 ? "request" : "requests"}`;
}

/** What the chart says to a screen reader: the total, and the busiest day if there was one. */
export function usageSummary(days: Day[]): string {
  const total = days.reduce((s, d) => s + d.requests, 0);
  const peak = days.reduce((best, d) => (d.requests > best.requests ? d : best), days[0] ?? { date: "", requests: 0 });
  return `${requests(total)} in total${peak.requests > 0 ? `; the busiest day was ${shortDay(peak.date)} with ${requests(peak.requests)}` : ""}.`;
}

/** The width of an element, followed as it changes; null until measured. */
function useWidth() {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => entry && setWidth(Math.max(240, Math.round(entry.contentRect.width))));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/**
 * Requests per day as bars, in plain SVG drawn at the container's width (so labels keep their
 * size on a phone). Screen readers get the title and a summary; the numbers are in a table below.
 */
export function UsageChart({ days }: { days: Day[] }) {
  const id = useId();
  const [box, width] = useWidth();
  const W = width ?? 720;
  const max = niceMax(Math.max(0, ...days.map((d) => d.requests)));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const last = days.length - 1;

  const chart = (
    <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-labelledby={`${id}-title ${id}-desc`} className="block text-slate-500">
      <title id={`${id}-title`}>Requests per day, last {days.length} days</title>
      <desc id={`${id}-desc`}>{usageSummary(days)}</desc>
      {[0, max / 2, max].map((t) => (
        <g key={t}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} stroke="currentColor" strokeOpacity={t === 0 ? 0.5 : 0.15} />
          <text x={PAD.left - 6} y={y(t)} dy="0.32em" textAnchor="end" fontSize="11" fill="currentColor">
            {t.toLocaleString()}
          </text>
        </g>
      ))}
      {days.map((d, i) => {
        const h = (d.requests / max) * plotH;
        return (
          <g key={d.date}>
            <rect
              x={PAD.left + i * slot + (slot - barW) / 2}
              y={PAD.top + plotH - h}
              width={barW}
              height={Math.max(h, d.requests > 0 ? 1 : 0)}
              rx={1.5}
              className={i === last ? "fill-brand-500" : "fill-brand-600/70"}
            >
              <title>{`${shortDay(d.date)}: ${requests(d.requests)}`}</title>
            </rect>
            {/* A label a week, counted back from today so the last one never crowds another. */}
            {(last - i) % 7 === 0 && (
              <text
                x={i === last ? PAD.left + (i + 1) * slot : PAD.left + i * slot + slot / 2}
                y={H - 8}
                textAnchor={i === last ? "end" : "middle"}
                fontSize="11"
                fill="currentColor"
              >
                {shortDay(d.date)}
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );

  return (
    <figure className="space-y-3">
      <div ref={box} style={{ minHeight: H }}>
        {width !== null && chart}
      </div>
      <figcaption className="text-xs text-slate-500">UTC days; today&apos;s bar is the last one and still counting.</figcaption>
      <details className="text-sm">
        <summary className="cursor-pointer text-brand-600 hover:underline">Show as a table</summary>
        <table className="mt-2 w-full max-w-xs text-left text-sm">
          <caption className="sr-only">Requests per day</caption>
          <thead>
            <tr className="border-b border-slate-200">
              <th scope="col" className="py-1 font-medium">
                Day (UTC)
              </th>
              <th scope="col" className="py-1 text-right font-medium">
                Requests
              </th>
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.date} className="border-b border-slate-100">
                <td className="py-1">{d.date}</td>
                <td className="py-1 text-right tabular-nums">{d.requests.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
