"use client";

import "uplot/dist/uPlot.min.css";
import type uPlot from "uplot";
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent, type RefObject } from "react";
import type { StreamsWire } from "./files-api";
import { chartOptions } from "./chart-options";
import { buildChartData, cursorStops, hasDistanceAxis, moveCursor, readoutAt, summarize, type Channel, type DistanceUnit, type XMode } from "./chart-series";
import type { SampleCursor } from "./sample-cursor";
import type { SportType } from "./sport";
import type { Units } from "./units";

// Each chart's plot area and the legend row under it: reserved before uPlot draws, so nothing moves.
const PLOT_HEIGHT = 150;
const LEGEND_HEIGHT = 28;

/** The charts drawn, by channel, so the keyboard's cursor can be set on each (uPlot's `setCursor`). */
type Plots = Map<string, uPlot>;

/**
 * Pace or speed, heart rate, power and elevation against distance or time: one uPlot per
 * channel the activity has, stacked, with one cursor shared by all (uPlot's cursor.sync). The
 * mouse moves it over any chart; the keyboard moves it from one control for them all (a slider
 * above the charts), sample by sample.
 */
export function ActivityCharts({
  streams,
  sport,
  units,
  cursor,
}: {
  streams: StreamsWire["streams"];
  sport: SportType;
  units: Units;
  /** Told which sample the cursor is on, for the route's marker. */
  cursor?: SampleCursor;
}) {
  const canUseDistance = hasDistanceAxis(streams);
  const [xMode, setXMode] = useState<XMode>(canUseDistance ? "distance" : "time");
  const data = useMemo(() => buildChartData(streams, sport, units, xMode), [streams, sport, units, xMode]);
  const syncKey = useId();
  const plots = useRef<Plots>(new Map());
  // Where the mouse last left the cursor (a row of `data`), so the keyboard goes on from there.
  const mouseRow = useRef<number | null>(null);

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
              onClick={() => {
                setXMode(m);
                mouseRow.current = null;
              }}
              className={`rounded px-3 py-1 focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500 ${
                data.xMode === m ? "bg-brand-600 font-medium text-white" : "text-slate-700 hover:bg-slate-100"
              }`}
            >
              {m === "distance" ? "Distance" : "Time"}
            </button>
          ))}
        </div>
      )}
      {/* Keyed by the axis: its stops are another list against distance than against time. */}
      <CursorControl key={data.xMode} data={data} plots={plots} mouseRow={mouseRow} />
      {data.channels.map((c) => (
        <Chart
          key={c.key}
          x={data.x}
          rows={data.rows}
          xMode={data.xMode}
          channel={c}
          distance={data.distance}
          syncKey={syncKey}
          plots={plots}
          mouseRow={mouseRow}
          cursor={cursor}
        />
      ))}
      {single}
    </div>
  );
}

/**
 * The charts' cursor for the keyboard: a slider (Tab reaches it; arrows move it a sample, Page Up
 * and Page Down a twentieth of the activity, Home and End to the ends) that sets the cursor on
 * every chart through uPlot's own `setCursor`, so each legend reads its value as under the mouse.
 * Its value in words (`aria-valuetext`: every chart's reading there) is what a screen reader
 * says as it moves, once per key; the mouse changes nothing here, so it is never spoken.
 */
function CursorControl({
  data,
  plots,
  mouseRow,
}: {
  data: ReturnType<typeof buildChartData>;
  plots: RefObject<Plots>;
  mouseRow: RefObject<number | null>;
}) {
  const stops = useMemo(() => cursorStops(data), [data]);
  const [at, setAt] = useState<number | null>(null);
  // The row the charts show under the cursor (uPlot's closest sample), which the words read.
  const [row, setRow] = useState<number | null>(null);
  if (stops.length === 0) return null;

  const place = (stop: number) => {
    const target = stops[stop]!;
    let shown: number | null = null;
    for (const plot of plots.current.values()) {
      plot.setCursor({ left: plot.valToPos(data.x[target]!, "x"), top: plot.over.clientHeight / 2 });
      shown ??= plot.cursor.idx ?? null;
    }
    setAt(stop);
    setRow(shown ?? target);
  };
  const nearestStop = (r: number) => {
    let best = 0;
    stops.forEach((s, i) => {
      if (Math.abs(data.x[s]! - data.x[r]!) < Math.abs(data.x[stops[best]!]! - data.x[r]!)) best = i;
    });
    return best;
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const next = moveCursor(at, e.key, stops.length);
    if (next === null) return;
    e.preventDefault();
    place(next);
  };

  return (
    <div
      role="slider"
      tabIndex={0}
      aria-label="Cursor on the charts"
      aria-orientation="horizontal"
      aria-valuemin={0}
      aria-valuemax={stops.length - 1}
      aria-valuenow={at ?? 0}
      aria-valuetext={readoutAt(data, row ?? stops[at ?? 0]!)}
      onKeyDown={onKeyDown}
      // The cursor shows where the keyboard is: where the mouse left it, else at the start.
      onFocus={() => place(at ?? (mouseRow.current !== null ? nearestStop(mouseRow.current) : 0))}
      onBlur={() => {
        for (const plot of plots.current.values()) plot.setCursor({ left: -10, top: -10 });
      }}
      className="rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500"
    >
      {at === null ? "Cursor: focus here and use the arrow keys to move it along the charts." : readoutAt(data, row ?? stops[at]!)}
    </div>
  );
}

function Chart({
  x,
  rows,
  xMode,
  channel,
  distance,
  syncKey,
  plots,
  mouseRow,
  cursor,
}: {
  x: number[];
  rows: (number | null)[];
  xMode: XMode;
  channel: Channel;
  distance: DistanceUnit;
  syncKey: string;
  plots: RefObject<Plots>;
  mouseRow: RefObject<number | null>;
  cursor?: SampleCursor;
}) {
  const host = useRef<HTMLDivElement>(null);
  const against = xMode === "distance" ? "distance" : "time";
  const summary = summarize(channel);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const registry = plots.current;
    let plot: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    let cancelled = false;
    // uPlot measures and draws on the DOM, so it loads in the browser only.
    void import("uplot").then(({ default: UPlot }) => {
      if (cancelled) return;
      // Whether a finger, not a mouse, last moved this chart's cursor.
      let byTouch = false;
      const opts = chartOptions({
        xMode,
        channel,
        distance,
        syncKey,
        width: Math.max(200, el.clientWidth),
        height: PLOT_HEIGHT,
        onCursor: (row) => {
          mouseRow.current = row;
        },
        onRow: (row) => cursor?.set(row === null ? null : (rows[row] ?? null)),
        keepOnLeave: () => byTouch,
      });
      plot = new UPlot(opts, [x, channel.values] as uPlot.AlignedData, el);
      registry.set(channel.key, plot);
      // A finger on a chart moves the cursor of them all, as the mouse does (uPlot follows the
      // mouse alone): on a phone the values were otherwise out of reach. A sideways drag moves it;
      // the page still scrolls up and down under the finger.
      const over = plot.over;
      over.style.touchAction = "pan-y";
      const touched = (e: TouchEvent) => {
        const t = e.touches[0];
        if (!t || !plot) return;
        const at = plot.posToVal(t.clientX - over.getBoundingClientRect().left, "x");
        for (const p of registry.values()) p.setCursor({ left: p.valToPos(at, "x"), top: p.over.clientHeight / 2 });
        mouseRow.current = plot.cursor.idx ?? null;
      };
      over.addEventListener("touchstart", touched, { passive: true });
      over.addEventListener("touchmove", touched, { passive: true });
      over.addEventListener("pointerdown", (e) => (byTouch = e.pointerType === "touch"));
      over.addEventListener("pointermove", (e) => {
        if (e.pointerType === "mouse") byTouch = false;
      });
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
      if (plot && registry.get(channel.key) === plot) registry.delete(channel.key);
      plot?.destroy();
    };
  }, [x, rows, xMode, channel, distance, syncKey, plots, mouseRow, cursor]);

  return (
    <figure className="m-0">
      <figcaption className="mb-1 flex items-baseline justify-between gap-2 text-sm">
        <span className="font-medium text-slate-900">
          {channel.label} <span className="font-normal text-slate-600">({channel.unit})</span>
        </span>
        <span className="text-xs text-slate-600">against {against}{xMode === "distance" ? ` (${distance.label})` : ""}</span>
      </figcaption>
      <div
        ref={host}
        role="img"
        aria-label={`${channel.label} against ${against}${summary ? `: ${summary}` : ""}`}
        className="w-full overflow-hidden"
        // Room for the plot and a one-row legend before uPlot loads; a legend that wraps (on a
        // phone) grows the box rather than being clipped with the cursor's values.
        style={{ minHeight: PLOT_HEIGHT + LEGEND_HEIGHT }}
      />
    </figure>
  );
}
