"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import type { LapWire } from "./files-api";
import type { speedReading } from "./chart-series";
import { formatDuration, formatElevation, hzToBpm, type Units } from "./units";
import { ScrollRegion } from "@/components/ui/scroll-region";

type Column = { header: string; show: boolean; cell: (l: LapWire) => string; numeric: boolean };

/** Laps shown until the athlete asks for all: a file with a lap every few seconds has thousands, and the page's summary comes after them. */
export const LAPS_SHOWN_FIRST = 50;

/**
 * The file's laps in the athlete's units; a column appears only if some lap has a value for it.
 * Pace or speed as the activity's headline reads it (`speed`, from `speedReading`). Moving time,
 * which the lap's pace or speed is worked out from, is said as such; elapsed time (pauses
 * within the lap included) is a column of its own where it says something more: a lap without a
 * moving time, or one that paused.
 */
export function LapsTable({ laps, speed, distance, units }: { laps: LapWire[]; speed: ReturnType<typeof speedReading>; distance: (m: number) => string; units: Units }) {
  const [showAll, setShowAll] = useState(false);
  const shown = showAll ? laps : laps.slice(0, LAPS_SHOWN_FIRST);
  const any = (f: (l: LapWire) => unknown) => laps.some((l) => f(l) !== null && f(l) !== undefined);
  const dash = <T,>(v: T | null, f: (v: T) => string) => (v === null ? "—" : f(v));
  const all: Column[] = [
    { header: "Lap", show: true, cell: (l) => String(l.index + 1), numeric: true },
    { header: "Moving time", show: any((l) => l.moving_time_s), cell: (l) => dash(l.moving_time_s, formatDuration), numeric: true },
    {
      header: "Elapsed time",
      show: laps.some((l) => l.moving_time_s === null || l.moving_time_s === undefined || l.moving_time_s !== l.elapsed_time_s),
      cell: (l) => formatDuration(l.elapsed_time_s),
      numeric: true,
    },
    { header: "Distance", show: any((l) => l.distance_m), cell: (l) => dash(l.distance_m, distance), numeric: true },
    {
      header: speed.label,
      show: any((l) => l.average_speed_mps),
      cell: (l) => dash(l.average_speed_mps, speed.format),
      numeric: true,
    },
    { header: "Heart rate", show: any((l) => l.average_heart_rate_hz), cell: (l) => dash(l.average_heart_rate_hz, (hz) => `${Math.round(hzToBpm(hz))} bpm`), numeric: true },
    { header: "Max heart rate", show: any((l) => l.max_heart_rate_hz), cell: (l) => dash(l.max_heart_rate_hz, (hz) => `${Math.round(hzToBpm(hz))} bpm`), numeric: true },
    { header: "Power", show: any((l) => l.average_power_w), cell: (l) => dash(l.average_power_w, (w) => `${Math.round(w)} W`), numeric: true },
    { header: "Elevation gain", show: any((l) => l.elevation_gain_m), cell: (l) => dash(l.elevation_gain_m, (m) => formatElevation(m, units)), numeric: true },
  ];
  const columns = all.filter((c) => c.show);

  if (laps.length === 0) return <p className="text-sm text-slate-600">No laps.</p>;
  return (
    <>
      {/* Wide tables scroll sideways on a phone rather than squeeze their numbers. */}
      <ScrollRegion label="Laps" className="-mx-4 overflow-x-auto px-4">
        <table className="w-full min-w-max text-sm tabular-nums">
          <caption className="sr-only">Laps</caption>
          <thead>
            <tr className="border-b border-slate-200 text-left text-xs text-slate-600">
              {columns.map((c) => (
                <th key={c.header} scope="col" className={`px-2 py-2 font-medium ${c.numeric ? "text-right" : ""}`}>
                  {c.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {shown.map((l) => (
              <tr key={l.index}>
                {columns.map((c, i) =>
                  i === 0 ? (
                    <th key={c.header} scope="row" className="px-2 py-2 text-right font-medium text-slate-900">
                      {c.cell(l)}
                    </th>
                  ) : (
                    <td key={c.header} className="px-2 py-2 text-right text-slate-800">
                      {c.cell(l)}
                    </td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {laps.length > LAPS_SHOWN_FIRST && (
        // One button that stays where it is, so the keyboard stays on it either way.
        <Button variant="secondary" className="mt-3" aria-expanded={showAll} onClick={() => setShowAll((v) => !v)}>
          {showAll ? `Show the first ${LAPS_SHOWN_FIRST} laps` : `Show all ${laps.length.toLocaleString("en")} laps`}
        </Button>
      )}
    </>
  );
}
