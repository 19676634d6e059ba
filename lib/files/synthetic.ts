import type { ExportInput } from "./export/types";
import type { Lap, Streams } from "./types";

/*
 * Values are generated at the coarsest precision the three file formats share (whole bpm and
 * rpm, whole watts and °C, altitude in FIT's 0.2 m steps, whole seconds at 1 Hz), so an export
 * read back can be compared exactly, not within a tolerance that could hide a bug.
 */

/** Mulberry32: small, fast and good enough for test data; the same seed gives the same activity. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EARTH_RADIUS_M = 6_371_008.8;
const toRad = Math.PI / 180;

/** Great-circle distance (haversine), as GPX readers compute distance from positions. */
export function haversineM(a: [number, number], b: [number, number]): number {
  const dLat = (b[0] - a[0]) * toRad;
  const dLng = (b[1] - a[1]) * toRad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[0] * toRad) * Math.cos(b[0] * toRad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

const round = (v: number, step: number) => Math.round(v / step) * step;
const fixed = (v: number, decimals: number) => Number(v.toFixed(decimals));

/**
 * A realistic activity of `hours` at `hz` (a ride or run with position along a plausible route,
 * altitude hills, speed, distance, heart rate, cadence, power, temperature, a few laps, a pause
 * with no samples, and a heart-rate dropout), deterministic from `seed`.
 */
export function syntheticActivity(opts: { hours: number; hz?: number; sport?: "ride" | "run"; seed?: number }): ExportInput {
  const hz = opts.hz ?? 1;
  const sport = opts.sport ?? "ride";
  const seed = opts.seed ?? 1;
  const rnd = random(seed);
  const ride = sport === "ride";
  const totalS = Math.max(60, Math.round(opts.hours * 3600));
  const pauseS = Math.min(240, Math.round(totalS * 0.05));
  const pauseAt = Math.round(totalS * 0.4);
  const movingSamples = Math.floor((totalS - pauseS) * hz) + 1;
  const dropoutAt = Math.floor(movingSamples * 0.7);
  const dropoutLen = Math.min(30 * hz, Math.floor(movingSamples / 20));

  const time_s: number[] = [];
  const latlng: [number, number][] = [];
  const distance_m: number[] = [];
  const altitude_m: number[] = [];
  const speed_mps: number[] = [];
  const heart_rate_hz: (number | null)[] = [];
  const cadence_hz: number[] = [];
  const power_w: number[] = [];
  const temperature_c: number[] = [];

  let lat = 59.9 + rnd() * 0.2;
  let lng = 10.6 + rnd() * 0.3;
  let heading = rnd() * 2 * Math.PI;
  let travelled = 0;
  let distance = 0;
  let hr = ride ? 95 : 100;
  const phase = rnd() * 10;
  const base = ride ? 8.2 : 3.1;
  const altitudeAt = (d: number) => 120 + 45 * Math.sin(d / 3100 + phase) + 14 * Math.sin(d / 650 + 2 * phase);

  for (let i = 0; i < movingSamples; i++) {
    const t = i / hz + (i / hz >= pauseAt ? pauseS : 0);
    const dt = i === 0 ? 0 : 1 / hz;
    const grade = (altitudeAt(travelled + 5) - altitudeAt(travelled - 5)) / 10;
    const ramp = Math.min(1, (i / hz + 5) / 40); // starting off
    const speed = Math.max(0.5, base * ramp * (1 - grade * (ride ? 6 : 3)) * (0.97 + rnd() * 0.06));
    heading += (rnd() - 0.5) * 0.06 / hz;
    const step = speed * dt;
    travelled += step;
    lat += ((step * Math.cos(heading)) / EARTH_RADIUS_M) / toRad;
    lng += ((step * Math.sin(heading)) / (EARTH_RADIUS_M * Math.cos(lat * toRad))) / toRad;
    const point: [number, number] = [fixed(lat, 7), fixed(lng, 7)];
    if (i > 0) distance += haversineM(latlng[i - 1]!, point);
    const power = Math.max(0, Math.round((ride ? 190 : 240) * (1 + grade * 8) + (rnd() - 0.5) * 40));
    const targetHr = (ride ? 105 : 120) + power * (ride ? 0.25 : 0.2);
    hr += (targetHr - hr) * 0.03 / hz;
    const cadence = ride && grade < -0.03 ? 0 : Math.round((ride ? 88 : 84) + (rnd() - 0.5) * 8);

    time_s.push(fixed(t, 3));
    latlng.push(point);
    distance_m.push(fixed(distance, 2));
    altitude_m.push(fixed(round(altitudeAt(travelled), 0.2), 1));
    speed_mps.push(fixed(speed, 3));
    heart_rate_hz.push(i >= dropoutAt && i < dropoutAt + dropoutLen ? null : Math.round(hr) / 60);
    cadence_hz.push(cadence / 60);
    power_w.push(power);
    temperature_c.push(Math.round(16 + 4 * Math.sin(t / 5000 + phase)));
  }

  const size = time_s.length;
  const streams: Streams = {
    size,
    time_s,
    latlng,
    distance_m,
    altitude_m,
    speed_mps,
    heart_rate_hz,
    cadence_hz,
    power_w,
    temperature_c,
  };

  const lapCount = Math.max(1, Math.min(5, Math.round(opts.hours * 2)));
  const bounds = Array.from({ length: lapCount + 1 }, (_, k) => Math.round((k * (size - 1)) / lapCount));
  const laps: Lap[] = [];
  for (let k = 0; k < lapCount; k++) laps.push(summarise(streams, bounds[k]!, bounds[k + 1]!, k === lapCount - 1, hz));

  const whole = summarise(streams, 0, size - 1, true, hz);
  const energyJ = power_w.reduce((sum, p, i) => sum + (i === 0 ? 0 : p / hz), 0);
  return {
    sport,
    startTime: new Date(Date.UTC(2026, 5, 1 + (seed % 28), 6, 30, 0)),
    firstSampleOffsetS: 0,
    name: ride ? "Morning ride <hills & fjords>" : "Easy run \"by the river\"",
    totals: {
      elapsedTimeS: whole.elapsedTimeS,
      movingTimeS: whole.movingTimeS,
      distanceM: whole.distanceM,
      elevationGainM: whole.elevationGainM,
      averageSpeedMps: whole.averageSpeedMps,
      maxSpeedMps: whole.maxSpeedMps,
      averageHeartRateHz: whole.averageHeartRateHz,
      maxHeartRateHz: whole.maxHeartRateHz,
      averagePowerW: whole.averagePowerW,
      energyJ: Math.round(energyJ),
    },
    streams,
    laps,
  };
}

/**
 * Totals over samples [from, to] (`to` inclusive only for the last lap: a lap ends where the
 * next begins). A gap longer than two sample periods counts as paused, not moving.
 */
function summarise(s: Streams, from: number, to: number, last: boolean, hz: number): Lap {
  const t = s.time_s;
  const elapsed = t[to]! - t[from]!;
  let paused = 0;
  for (let i = from + 1; i <= to; i++) {
    const gap = t[i]! - t[i - 1]!;
    if (gap > 2 / hz) paused += gap - 1 / hz;
  }
  const end = last ? to : to - 1;
  let gain = 0;
  let maxSpeed = 0;
  let hrSum = 0;
  let hrN = 0;
  let hrMax = 0;
  let pSum = 0;
  let pN = 0;
  for (let i = from; i <= end; i++) {
    if (i > from) gain += Math.max(0, s.altitude_m![i]! - s.altitude_m![i - 1]!);
    maxSpeed = Math.max(maxSpeed, s.speed_mps![i]!);
    const h = s.heart_rate_hz![i];
    if (h != null) {
      hrSum += h;
      hrN++;
      hrMax = Math.max(hrMax, h);
    }
    pSum += s.power_w![i]!;
    pN++;
  }
  const moving = fixed(elapsed - paused, 3);
  const distance = fixed(s.distance_m![to]! - s.distance_m![from]!, 2);
  return {
    startOffsetS: t[from]!,
    elapsedTimeS: fixed(elapsed, 3),
    movingTimeS: moving,
    distanceM: distance,
    elevationGainM: fixed(gain, 1),
    averageSpeedMps: fixed(distance / moving, 3),
    maxSpeedMps: maxSpeed,
    averageHeartRateHz: hrN ? Math.round((hrSum / hrN) * 60) / 60 : null,
    maxHeartRateHz: hrN ? hrMax : null,
    averagePowerW: pN ? Math.round(pSum / pN) : null,
  };
}
