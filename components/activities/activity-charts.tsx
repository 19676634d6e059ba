"use client";

import "uplot/dist/uPlot.min.css";
import type uPlot from "uplot";
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { StreamsWire } from "./files-api";
import { buildChartData, formatX, hasDistanceAxis, isolatedPoints, robustRange, summarize, type Channel, type XMode } from "./chart-series";
import type { SportType } from "./sport";
import { UNIT_LABELS, type Units } from "./units";

// Each chart's plot area and the legend row under it: reserved before uPlot draws, so nothing moves.
const PLOT_HEIGHT = 150;
const LEGEND_HEIGHT = 28;
// Time-axis ticks at whole minutes and hours, not at uPlot's decimal steps of seconds.
const TIME_INCRS = [15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 14400, 21600, 43200, 86400];
// Pace ticks at whole seconds and minutes per km or mile.
const PACE_INCRS = [5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800];

/**
 * Pace or speed, heart rate, power and elevation against distance or time: one uPlot per
 * channel the activity has, stacked, with one cursor shared by all (uPlot's cursor.sync).
 */
export function ActivityCharts({ streams, sport, units }: { streams: StreamsWire["streams"]; sport: SportType; units: Units }) {
  const canUseDistance = hasDistanceAxis(streams);
  const [xMode, setXMode] = useState<XMode>(canUseDistance ? "distance" : "time");
  const data = useMemo(() => buildChartData(streams, sport, units, xMode), [streams, sport, units, xMode]);
  const syncKey = useId();

  // A channel with one value has no chart (no line, no range): its value is said in words.
  const single = data.single.length > 0 && (
    <p className="text-sm text-slate-600">
      Recorded in one sample only, too few to chart: {data.single.map((c) => `${c.label.toLowerCase()} ${c.value}`).join(", ")}.
    </p>
  );
  if (data.channels.length === 0)
    return (
      <div className="space-y-2">
        <p className="text-sm text-slate-600">This activity recorded no speed, heart rate, power or elevation to chart.</p>
        {single}
      </div>
    );

  return (
    <div className="space-y-4">
      {canUseDistance && (
        <div role="group" aria-label="Charts against" className="inline-flex rounded-md border border-slate-300 p-0.5 text-sm">
          {(["distance", "time"] as const).map((m) => (
            <button
              key={m}
              type="button"
              aria-pressed={data.xMode === m}
              onClick={() => setXMode(m)}
              className={`rounded px-3 py-1 focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500 ${
                data.xMode === m ? "bg-brand-600 font-medium text-white" : "text-slate-700 hover:bg-slate-100"
              }`}
            >
              {m === "distance" ? "Distance" : "Time"}
            </button>
          ))}
        </div>
      )}
      {data.channels.map((c) => (
        <Chart key={c.key} x={data.x} xMode={data.xMode} channel={c} units={units} syncKey={syncKey} />
      ))}
      {single}
    </div>
  );
}

function Chart({ x, xMode, channel, units, syncKey }: { x: number[]; xMode: XMode; channel: Channel; units: Units; syncKey: string }) {
  const host = useRef<HTMLDivElement>(null);
  const against = xMode === "distance" ? "distance" : "time";
  const summary = summarize(channel);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    let plot: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    let cancelled = false;
    // uPlot measures and draws on the DOM, so it loads in the browser only.
    void import("uplot").then(({ default: UPlot }) => {
      if (cancelled) return;
      const range = robustRange(channel.values, channel.key === "pace");
      const isolated = isolatedPoints(channel.values);
      const opts: uPlot.Options = {
        width: Math.max(200, el.clientWidth),
        height: PLOT_HEIGHT,
        cursor: { sync: { key: syncKey, setSeries: false }, drag: { x: false, y: false, setScale: false }, points: { size: 7 } },
        scales: {
          x: { time: false },
          y: { dir: channel.inverted ? -1 : 1, range: range ? () => range : undefined },
        },
        legend: { show: true, live: true },
        series: [
          { label: xMode === "distance" ? "Distance" : "Time", value: (_u, v) => (v === null ? "—" : formatX(v, xMode, units)) },
          {
            label: channel.label,
            stroke: channel.color,
            width: 1.75,
            fill: channel.fill ? `${channel.color}26` : undefined,
            // A value between gaps has no line to be part of: drawn as a point, or it would not show.
            points: { show: false, filter: isolated.length > 0 ? isolated : null, size: 5, fill: channel.color },
            value: (_u, v) => (v === null ? "—" : channel.format(v)),
          },
        ],
        axes: [
          {
            stroke: "#334155",
            grid: { stroke: "#e2e8f0", width: 1 },
            ticks: { stroke: "#cbd5e1", width: 1 },
            incrs: xMode === "time" ? TIME_INCRS : undefined,
            values: (_u, splits) => splits.map((v) => (xMode === "time" ? formatX(v, xMode, units) : `${+v.toFixed(2)}`)),
          },
          {
            stroke: "#334155",
            size: 60,
            incrs: channel.key === "pace" ? PACE_INCRS : undefined,
            grid: { stroke: "#e2e8f0", width: 1 },
            ticks: { stroke: "#cbd5e1", width: 1 },
            values: (_u, splits) => splits.map((v) => (channel.key === "pace" ? channel.format(v).split(" ")[0]! : `${+v.toFixed(1)}`)),
          },
        ],
      };
      plot = new UPlot(opts, [x, channel.values] as uPlot.AlignedData, el);
      let width = el.clientWidth;
      observer = new ResizeObserver(() => {
        const w = el.clientWidth;
        if (plot && w > 0 && w !== width) {
          width = w;
          plot.setSize({ width: Math.max(200, w), height: PLOT_HEIGHT });
        }
      });
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [x, xMode, channel, units, syncKey]);

  return (
    <figure className="m-0">
      <figcaption className="mb-1 flex items-baseline justify-between gap-2 text-sm">
        <span className="font-medium text-slate-900">
          {channel.label} <span className="font-normal text-slate-600">({channel.unit})</span>
        </span>
        <span className="text-xs text-slate-600">against {against}{xMode === "distance" ? ` (${UNIT_LABELS[units].distance})` : ""}</span>
      </figcaption>
      <div
        ref={host}
        role="img"
        aria-label={`${channel.label} against ${against}${summary ? `: ${summary}` : ""}`}
        className="w-full overflow-hidden"
        style={{ height: PLOT_HEIGHT + LEGEND_HEIGHT }}
      />
    </figure>
  );
}
