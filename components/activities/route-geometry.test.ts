import { describe, expect, it } from "vitest";
import { drawRoute, mercator, scaleBar, type LatLng } from "./route-geometry";

const points = (d: string) => [...d.matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]) }));

describe("drawRoute", () => {
  it("fits the route inside the box with its padding, north up and east right", () => {
    // A run going north then east, in Boston.
    const route: LatLng[] = [
      [42.21, -71.11],
      [42.22, -71.11],
      [42.22, -71.09],
    ];
    const r = drawRoute(route, 600, 400, 20)!;
    const pts = points(r.d);
    expect(pts).toHaveLength(3);
    for (const p of pts) {
      expect(p.x).toBeGreaterThanOrEqual(20 - 0.05);
      expect(p.x).toBeLessThanOrEqual(580 + 0.05);
      expect(p.y).toBeGreaterThanOrEqual(20 - 0.05);
      expect(p.y).toBeLessThanOrEqual(380 + 0.05);
    }
    expect(pts[1]!.y).toBeLessThan(pts[0]!.y); // north is up
    expect(pts[2]!.x).toBeGreaterThan(pts[1]!.x); // east is right
    // The taller side fills the inner height: the route is scaled to fit, not drawn tiny.
    expect(Math.max(...pts.map((p) => p.y)) - Math.min(...pts.map((p) => p.y))).toBeCloseTo(360, 0);
    expect(r.start).toEqual(pts[0]);
    expect(r.finish).toEqual(pts[2]);
  });

  it("keeps the shape: Web Mercator at 60° stretches north-south distances as a map does", () => {
    // 0.01° of latitude and 0.02° of longitude at 60°N are about the same length on the ground.
    const r = drawRoute([[60, 10], [60.01, 10], [60.01, 10.02]], 1000, 1000, 0)!;
    const [a, b, c] = points(r.d);
    const up = a!.y - b!.y;
    const across = c!.x - b!.x;
    expect(across / up).toBeGreaterThan(0.95);
    expect(across / up).toBeLessThan(1.05);
  });

  it("breaks the line where positions are missing, and ignores (0, 0) fixes", () => {
    const r = drawRoute([[50, 8], [50.001, 8], null, [0, 0], [50.002, 8.001], [50.003, 8.001]], 300, 300, 10)!;
    expect(r.d.match(/M/g)).toHaveLength(2);
    expect(points(r.d)).toHaveLength(4);
    // Where each sample is drawn, by its index in the stream (for the charts' cursor): the path's own points.
    const [a, b, c, e] = points(r.d);
    expect(r.at).toEqual([a, b, null, null, c, e]);
    expect(r.at[0]).toEqual(r.start);
    expect(r.at[5]).toEqual(r.finish);
  });

  it("keeps a route across the antimeridian in one piece", () => {
    const r = drawRoute([[-17, 179.99], [-17, -179.99]], 600, 400, 20)!;
    const [a, b] = points(r.d);
    // Two points 0.02° apart: neighbours, drawn left to right, not across the whole world.
    expect(b!.x).toBeGreaterThan(a!.x);
  });

  it("has nothing to draw with fewer than two positions", () => {
    expect(drawRoute([], 100, 100, 0)).toBeNull();
    expect(drawRoute([[1, 2], null, [Number.NaN, 3], [95, 0]], 100, 100, 0)).toBeNull();
  });

  it("draws a route that never moved as a dot in the middle", () => {
    const r = drawRoute([[47, 8], [47, 8]], 200, 100, 0)!;
    expect(r.start).toEqual({ x: 100, y: 50 });
  });
});

describe("scaleBar", () => {
  it("picks a round 1, 2 or 5 that fits", () => {
    // 10 m per unit, at most 150 units: 1.5 km fits, so 1 km (100 units).
    expect(scaleBar(10, 150, 1000)).toEqual({ value: 1, length: 100 });
    expect(scaleBar(10, 250, 1000)).toEqual({ value: 2, length: 200 });
    expect(scaleBar(1, 150, 1000)).toEqual({ value: 0.1, length: 100 });
    expect(scaleBar(0, 150, 1000)).toBeNull();
  });

  it("metres per unit follow the route's latitude", () => {
    const box = 1000;
    // 0.1° of longitude spans about 11.1 km at the equator and half that at 60°.
    const eq = drawRoute([[0.0001, 0], [0.0001, 0.1]], box, box, 0)!;
    const north = drawRoute([[60, 0], [60, 0.1]], box, box, 0)!;
    expect(eq.metresPerUnit * box).toBeCloseTo(11_132, -2);
    expect(north.metresPerUnit * box).toBeCloseTo(5_566, -2);
    expect(mercator([0, 0]).y).toBeCloseTo(0, 12);
  });
});
