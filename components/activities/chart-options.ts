import type uPlot from "uplot";
import { chartRange, formatX, isolatedPoints, tickLabels, type Channel, type DistanceUnit, type XMode } from "./chart-series";

// How one activity chart is drawn (uPlot's options), apart from the DOM: pure, so its axes,
// labels and fill are tested without a browser (activity-charts.tsx draws it).

// Time-axis ticks at whole minutes and hours, not at uPlot's decimal steps of seconds.
export const TIME_INCRS = [15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 14400, 21600, 43200, 86400];
// Pace ticks at whole seconds and minutes per km or mile.
export const PACE_INCRS = [5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800];

export type ChartOptionsInput = {
  xMode: XMode;
  channel: Channel;
  /** The unit of x against distance (`ChartData.distance`). */
  distance: DistanceUnit;
  syncKey: string;
  width: number;
  height: number;
  /** The row under the cursor, whenever uPlot moves it (the mouse, or the keyboard's slider). */
  onCursor: (row: number) => void;
  /** The row under the cursor, or null once it has left the chart: for the route's marker. */
  onRow?: (row: number | null) => void;
  /** True while the cursor was last put down by a finger: a mouseleave then leaves it where it is. */
  keepOnLeave?: () => boolean;
};

/** uPlot's options for one channel's chart against distance or time. */
export function chartOptions({ xMode, channel, distance, syncKey, width, height, onCursor, onRow, keepOnLeave }: ChartOptionsInput): uPlot.Options {
  const range = chartRange(channel);
  const isolated = isolatedPoints(channel.values);
  return {
    width,
    height,
    cursor: {
      sync: { key: syncKey, setSeries: false },
      drag: { x: false, y: false, setScale: false },
      points: { size: 7 },
      // The legend reads the value under the cursor and is no control: uPlot's click on a
      // label hid the line, unreachable by keyboard and with nothing saying how to undo it.
      bind: {
        click: () => null,
        // After a tap the browser may send a mouseleave, which took away the cursor the finger
        // had just put down: on a phone no value could be read. After a touch the cursor stays
        // where the finger left it, until a mouse moves over the chart again.
        mouseleave: (_u, _target, handler) => (e) => (keepOnLeave?.() ? null : handler(e)),
      },
    },
    scales: {
      x: { time: false },
      y: { dir: channel.inverted ? -1 : 1, range: range ? () => range : undefined },
    },
    legend: { show: true, live: true },
    // The keyboard's cursor goes on from where the mouse left it.
    hooks: {
      setCursor: [
        (u) => {
          if (u.cursor.idx !== null && u.cursor.idx !== undefined) onCursor(u.cursor.idx);
          onRow?.(u.cursor.idx ?? null);
        },
      ],
    },
    series: [
      { label: xMode === "distance" ? "Distance" : "Time", value: (_u, v) => (v === null ? "—" : formatX(v, xMode, distance)) },
      {
        label: channel.label,
        stroke: channel.color,
        width: 1.75,
        fill: channel.fill ? `${channel.color}26` : undefined,
        // Down to the bottom of the plot, not to 0 (uPlot's default): an elevation below the sea
        // filled up to 0 looks upside down, and one far above it is all fill.
        fillTo: (u) => {
          const y = u.scales.y!;
          return (channel.inverted ? y.max : y.min) ?? 0;
        },
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
        // As many decimals as the ticks' step needs, so that no two read the same.
        values: (_u, splits, _axis, _space, step) => (xMode === "time" ? splits.map((v) => formatX(v, xMode, distance)) : tickLabels(splits, step)),
      },
      {
        stroke: "#334155",
        size: 60,
        incrs: channel.key === "pace" ? PACE_INCRS : undefined,
        grid: { stroke: "#e2e8f0", width: 1 },
        ticks: { stroke: "#cbd5e1", width: 1 },
        values: (_u, splits, _axis, _space, step) => (channel.key === "pace" ? splits.map((v) => channel.format(v).split(" ")[0]!) : tickLabels(splits, step)),
      },
    ],
  };
}
