// Drawing a route needs no map service: Web Mercator (what every web map uses, so the shape
// looks as it does on one) scaled to fit the box. Pure, so it is tested without a DOM.

export type LatLng = [number, number];
export type Point = { x: number; y: number };
export type RouteDrawing = {
  /** SVG path data, one subpath per stretch recorded without a gap. */
  d: string;
  start: Point;
  finish: Point;
  /** A round distance and its length in drawing units, for a scale bar. */
  metresPerUnit: number;
  /** Where each sample of the stream is drawn (same index), or null for one without a position: the charts' cursor on the route. */
  at: (Point | null)[];
};

const EARTH_RADIUS_M = 6_378_137;
// Web Mercator's own limit: beyond it y runs to infinity.
const MAX_LAT = 85.05112878;

const valid = (p: LatLng | null | undefined): p is LatLng =>
  !!p && Number.isFinite(p[0]) && Number.isFinite(p[1]) && Math.abs(p[0]) <= 90 && Math.abs(p[1]) <= 180 && !(p[0] === 0 && p[1] === 0);

/** Web Mercator in radians of the equator: x east, y north. */
export function mercator([lat, lng]: LatLng): Point {
  const phi = (Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180;
  return { x: (lng * Math.PI) / 180, y: Math.log(Math.tan(Math.PI / 4 + phi / 2)) };
}

/**
 * The route from a `latlng` stream, fitted into `width` × `height` with `padding` on every side,
 * north up. Samples without a position break the line rather than join its ends; (0, 0) counts
 * as no position (a receiver without a fix reports it). A route crossing the antimeridian stays
 * in one piece. Null when fewer than two positions exist.
 */
export function drawRoute(latlng: readonly (LatLng | null)[], width: number, height: number, padding: number): RouteDrawing | null {
  const runs: Point[][] = [];
  let run: Point[] = [];
  // The projected position of each sample, by its index in the stream.
  const projected: (Point | null)[] = new Array<Point | null>(latlng.length).fill(null);
  let prevLng: number | null = null;
  let shift = 0;
  let count = 0;
  let latSum = 0;
  for (const [i, p] of latlng.entries()) {
    if (!valid(p)) {
      if (run.length) runs.push(run);
      run = [];
      continue;
    }
    // Keep longitude continuous: a step of more than half the world is the antimeridian.
    if (prevLng !== null) {
      const step = p[1] + shift - prevLng;
      if (step > 180) shift -= 360;
      else if (step < -180) shift += 360;
    }
    const lng = p[1] + shift;
    prevLng = lng;
    const q = mercator([p[0], lng]);
    run.push(q);
    projected[i] = q;
    count++;
    latSum += p[0];
  }
  if (run.length) runs.push(run);
  if (count < 2) return null;

  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const r of runs)
    for (const q of r) {
      minX = Math.min(minX, q.x);
      maxX = Math.max(maxX, q.x);
      minY = Math.min(minY, q.y);
      maxY = Math.max(maxY, q.y);
    }
  const spanX = maxX - minX;
  const spanY = maxY - minY;
  const innerW = width - 2 * padding;
  const innerH = height - 2 * padding;
  // A track that never moved (a treadmill with a stuck fix) is drawn as a dot in the middle.
  const scale = spanX === 0 && spanY === 0 ? 1 : Math.min(spanX > 0 ? innerW / spanX : Infinity, spanY > 0 ? innerH / spanY : Infinity);
  const offX = padding + (innerW - spanX * scale) / 2;
  const offY = padding + (innerH - spanY * scale) / 2;
  const toView = (q: Point): Point => ({ x: round1(offX + (q.x - minX) * scale), y: round1(offY + (maxY - q.y) * scale) });

  const d = runs
    .map((r) => {
      const pts = r.map(toView);
      // One point alone draws nothing with L; a zero-length segment with round caps shows a dot.
      const tail = pts.length === 1 ? [pts[0]!] : pts.slice(1);
      return `M${pts[0]!.x} ${pts[0]!.y}` + tail.map((q) => `L${q.x} ${q.y}`).join("");
    })
    .join("");
  const first = runs[0]![0]!;
  const lastRun = runs[runs.length - 1]!;
  const last = lastRun[lastRun.length - 1]!;
  // Mercator stretches by 1/cos(latitude); at the route's mean latitude one radian of x is R·cos φ metres.
  const meanLat = ((latSum / count) * Math.PI) / 180;
  const metresPerUnit = scale > 0 && Number.isFinite(scale) ? (EARTH_RADIUS_M * Math.cos(meanLat)) / scale : 0;
  return { d, start: toView(first), finish: toView(last), metresPerUnit, at: projected.map((q) => (q ? toView(q) : null)) };
}

/** The longest 1, 2 or 5 × 10ⁿ of `unitM` metres that fits in `maxUnits` drawing units. */
export function scaleBar(metresPerUnit: number, maxUnits: number, unitM: number): { value: number; length: number } | null {
  if (!(metresPerUnit > 0)) return null;
  const maxValue = (maxUnits * metresPerUnit) / unitM;
  const pow = 10 ** Math.floor(Math.log10(maxValue));
  const value = [5, 2, 1].map((m) => m * pow).find((v) => v <= maxValue) ?? pow;
  return { value, length: (value * unitM) / metresPerUnit };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
