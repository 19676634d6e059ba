import Link from "next/link";
import type { ActivityWire } from "@/lib/activities/schemas";
import { SPORT_LABELS } from "./sport";
import { formatAverage, formatDistance, formatDuration, formatLocal, type Units } from "./units";

/** One activity in a list: its name (a link to its page), sport, start and three figures. */
export function ActivityRow({ activity: a, units }: { activity: ActivityWire; units: Units }) {
  // The same three columns on every row, so they line up down the list, in CONTRACT §9's words
  // for /activities: km and km/h, or miles and min/mile, whatever the sport (an activity's own
  // page reads it as its sport does: a run's pace, a swim in metres or yards).
  const stats = [
    { label: "Distance", value: a.distance_m !== null ? formatDistance(a.distance_m, units) : "—" },
    { label: "Time", value: formatDuration(a.moving_time_s ?? a.elapsed_time_s) },
    {
      label: units === "metric" ? "Speed" : "Pace",
      value: a.average_speed_mps !== null ? formatAverage(a.average_speed_mps, units) : "—",
    },
  ];
  return (
    <li className="relative px-4 py-3 hover:bg-slate-50">
      <div className="flex flex-col gap-2 sm:flex-row sm:items-center sm:justify-between sm:gap-4">
        <div className="min-w-0 [overflow-wrap:anywhere]">
          <Link href={`/activities/${a.id}`} className="font-medium text-slate-900 after:absolute after:inset-0 hover:text-brand-700">
            {/* Isolated: a name in a right-to-left script reads in its own direction, and moves nothing around it. */}
            <bdi>{a.name}</bdi>
          </Link>
          <p className="text-xs text-slate-500">
            {SPORT_LABELS[a.sport_type]} · {formatLocal(a.start_local, { weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "numeric", minute: "2-digit" })}
          </p>
        </div>
        <dl className="flex shrink-0 gap-5 text-sm tabular-nums">
          {stats.map((s) => (
            <div key={s.label} className="min-w-16 sm:min-w-24 sm:text-right">
              <dt className="text-xs text-slate-500">{s.label}</dt>
              <dd className="font-medium text-slate-800">{s.value}</dd>
            </div>
          ))}
        </dl>
      </div>
    </li>
  );
}
