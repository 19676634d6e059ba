import { useId, useSyncExternalStore } from "react";
import { drawRoute, scaleBar, type LatLng, type Point } from "./route-geometry";
import type { SampleCursor } from "./sample-cursor";
import { METERS_PER_MILE, type Units } from "./units";

const W = 600;
const H = 400;
/** The strip at the bottom the scale bar and its label take. */
const BAR_STRIP = 30;

/**
 * The route drawn from the `latlng` stream: north up, start (circle) and finish (square) marked,
 * and where the charts' cursor is, while it is on them.
 */
export function RouteMap({ latlng, units, cursor }: { latlng: readonly (LatLng | null)[]; units: Units; cursor?: SampleCursor }) {
  const descId = useId();
  // Fitted above the scale bar's strip, so the route never runs under it.
  const drawing = drawRoute(latlng, W, H - BAR_STRIP, 24);
  if (!drawing) return <p className="text-sm text-slate-600">This activity recorded no positions to draw.</p>;
  const unitM = units === "metric" ? 1000 : METERS_PER_MILE;
  const bar = scaleBar(drawing.metresPerUnit, W / 3, unitM);
  const unitLabel = units === "metric" ? "km" : "mi";
  return (
    <figure className="m-0">
      <svg
        role="img"
        aria-label="Route"
        aria-describedby={descId}
        viewBox={`0 0 ${W} ${H}`}
        className="block aspect-[3/2] h-auto w-full rounded-md bg-slate-50"
        preserveAspectRatio="xMidYMid meet"
      >
        <path d={drawing.d} fill="none" stroke="#ffffff" strokeWidth={7} strokeLinejoin="round" strokeLinecap="round" />
        <path d={drawing.d} fill="none" stroke="#1466bd" strokeWidth={3.5} strokeLinejoin="round" strokeLinecap="round" />
        <circle cx={drawing.start.x} cy={drawing.start.y} r={8} fill="#047857" stroke="#ffffff" strokeWidth={2.5} />
        <rect x={drawing.finish.x - 7} y={drawing.finish.y - 7} width={14} height={14} fill="#111827" stroke="#ffffff" strokeWidth={2.5} />
        {cursor && <CursorMarker at={drawing.at} cursor={cursor} />}
        {bar && (
          <g transform={`translate(${W - 16 - bar.length} ${H - 18})`} fill="#334155">
            <rect width={bar.length} height={4} />
            <text x={bar.length / 2} y={-7} textAnchor="middle" fontSize={20}>
              {formatScale(bar.value)} {unitLabel}
            </text>
          </g>
        )}
      </svg>
      <figcaption id={descId} className="mt-2 flex flex-wrap gap-4 text-xs text-slate-700">
        <span className="inline-flex items-center gap-1.5">
          <svg aria-hidden width="12" height="12" viewBox="0 0 12 12">
            <circle cx="6" cy="6" r="5" fill="#047857" />
          </svg>
          Start
        </span>
        <span className="inline-flex items-center gap-1.5">
          <svg aria-hidden width="12" height="12" viewBox="0 0 12 12">
            <rect x="1" y="1" width="10" height="10" fill="#111827" />
          </svg>
          Finish
        </span>
        <span>North is up</span>
      </figcaption>
    </figure>
  );
}

/** The charts' cursor on the route: drawn again alone as it moves. Nothing for a sample without a position. */
function CursorMarker({ at, cursor }: { at: readonly (Point | null)[]; cursor: SampleCursor }) {
  const sample = useSyncExternalStore(cursor.subscribe, cursor.get, () => null);
  const p = sample === null ? null : at[sample];
  if (!p) return null;
  return <circle data-cursor={sample} cx={p.x} cy={p.y} r={7} fill="#f59e0b" stroke="#ffffff" strokeWidth={2.5} aria-hidden />;
}

const formatScale = (v: number) => (v >= 1 ? String(v) : v.toPrecision(1));
