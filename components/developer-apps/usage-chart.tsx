import { useId } from "react";

type Day = { date: string; requests: number };

const W = 720;
const H = 220;
const PAD = { top: 12, right: 8, bottom: 28, left: 44 };

/** A ceiling for the axis: 1, 2 or 5 times a power of ten, at least 4. */
function niceMax(n: number): number {
  if (n <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

/** "21 Nov" for a UTC `YYYY-MM-DD`. */
export function shortDay(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, { day: "numeric", month: "short", timeZone: "UTC" });
}

/**
 * Requests per day as bars, in plain SVG. Screen readers get the title and a summary; the
 * same numbers are in a table below it.
 */
export function UsageChart({ days }: { days: Day[] }) {
  const id = useId();
  const max = niceMax(Math.max(0, ...days.map((d) => d.requests)));
  const total = days.reduce((s, d) => s + d.requests, 0);
  const peak = days.reduce((best, d) => (d.requests > best.requests ? d : best), days[0] ?? { date: "", requests: 0 });
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const ticks = [0, max / 2, max];

  return (
    <figure className="space-y-3">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        width="100%"
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        className="block h-auto max-h-72 text-slate-500"
      >
        <title id={`${id}-title`}>Requests per day, last {days.length} days</title>
        <desc id={`${id}-desc`}>
          {total} requests in total
          {peak && peak.requests > 0 ? `; the busiest day was ${shortDay(peak.date)} with ${peak.requests}` : ""}.
        </desc>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} stroke="currentColor" strokeOpacity={t === 0 ? 0.5 : 0.15} />
            <text x={PAD.left - 6} y={y(t)} dy="0.32em" textAnchor="end" fontSize="11" fill="currentColor">
              {Number.isInteger(t) ? t.toLocaleString() : t.toFixed(1)}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          const h = (d.requests / max) * plotH;
          return (
            <g key={d.date}>
              <rect
                x={x}
                y={PAD.top + plotH - h}
                width={barW}
                height={Math.max(h, d.requests > 0 ? 1 : 0)}
                rx={1.5}
                className={i === days.length - 1 ? "fill-brand-500" : "fill-brand-600/70"}
              >
                <title>{`${shortDay(d.date)}: ${d.requests.toLocaleString()} ${d.requests === 1 ? "request" : "requests"}`}</title>
              </rect>
              {(i % 7 === 0 || i === days.length - 1) && (
                <text x={PAD.left + i * slot + slot / 2} y={H - 8} textAnchor="middle" fontSize="11" fill="currentColor">
                  {shortDay(d.date)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
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
