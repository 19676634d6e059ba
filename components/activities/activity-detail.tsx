"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { ConsoleApiError, consoleFetch, isClientError } from "@/components/console/api";
import { useDocumentTitle } from "@/components/console/document-title";
import { useProfile } from "@/components/profile/use-profile";
import { Button } from "@/components/ui/button";
import { Card, PageHeader } from "@/components/ui/card";
import { useFocusBack } from "@/components/ui/focus-back";
import { Notice } from "@/components/ui/notice";
import { coachedAthlete, useCoachedTeams } from "@/components/teams/shared";
import type { ActivityWire } from "@/lib/activities/schemas";
import { DeleteActivity, DownloadMenu } from "./activity-actions";
import { ActivityCharts } from "./activity-charts";
import { ACTIVITY_NOT_HERE, describeSaveProblem } from "./activity-problems";
import { recordRows } from "./activity-record";
import { distanceReading, speedReading } from "./chart-series";
import { ActivityForm } from "./activity-form";
import { changedFields, toFormValues, type ActivityInput } from "./activity-form-values";
import { consolePaths, type LapWire, type StreamsWire } from "./files-api";
import { LapsTable } from "./laps-table";
import { activitiesChanged, activityGone, activityKey, lapsKey, streamsKey } from "./query-keys";
import { RouteMap } from "./route-map";
import { createSampleCursor } from "./sample-cursor";
import { SPORT_LABELS } from "./sport";
import {
  formatDuration,
  formatElevation,
  formatLocal,
  hzToBpm,
  joulesToKcal,
  unitsOf,
  type Units,
} from "./units";

/**
 * The samples a file recorded, at most 1,000 (enough for a chart as wide as a screen and a route
 * as a line): one query for the charts, the route and whether a GPX track can be offered.
 */
function streamsQuery(activityId: string, fromFile: boolean) {
  return {
    queryKey: streamsKey(activityId),
    queryFn: () => consoleFetch<StreamsWire>(consolePaths.streams(activityId, "medium")),
    enabled: fromFile,
    staleTime: Infinity,
  };
}

const hasPositions = (s: StreamsWire["streams"]) => !!s.latlng?.some((p) => p !== null);

/**
 * One activity with every field, editable by the athlete it belongs to. A coach sees a team
 * member's activity too (README "Reach": its streams, laps and exports), with whose it is, and
 * may download it; editing and deleting are the athlete's.
 */
export function ActivityDetail({ activityId }: { activityId: string }) {
  const qc = useQueryClient();
  const key = activityKey(activityId);
  const activity = useQuery({
    queryKey: key,
    queryFn: () => consoleFetch<ActivityWire>(`/api/console/activities/${encodeURIComponent(activityId)}`),
    // A 404 will not turn into a 200 by asking again; only server trouble is worth a retry.
    retry: (failures, err) => !isClientError(err) && failures < 1,
  });
  const profile = useProfile();
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  // The form opens in place of "Edit" (focus in its first field); cancelled or saved, the
  // keyboard goes on from "Edit" again, and the outcome is said in the notice.
  const { openerRef, close: closeForm } = useFocusBack<HTMLButtonElement>(editing, () => setEditing(false));

  const save = useMutation({
    mutationFn: (patch: Partial<ActivityInput>) =>
      consoleFetch<ActivityWire>(`/api/console/activities/${encodeURIComponent(activityId)}`, { method: "PATCH", body: patch }),
    onSuccess: (updated) => {
      qc.setQueryData(key, updated);
      activitiesChanged(qc);
      closeForm();
      setNotice("Saved.");
    },
    // Deleted elsewhere: the form says so, and the page behind it learns it (shown on Cancel).
    onError: (e) => {
      if (e instanceof ConsoleApiError && e.status === 404) activityGone(qc, activityId);
    },
  });

  const missing = activity.error instanceof ConsoleApiError && activity.error.status === 404;
  // What was loaded before a 404 (a refetch on returning to the tab, after a save or a download
  // found it gone) is not shown as if it were still here.
  const a = missing ? undefined : activity.data;
  // The page's title is the static "Activity" until it loads, then the activity's name; an
  // activity that is not there says so.
  useDocumentTitle(missing ? "Activity not found" : (activity.data?.name ?? null));
  const units = profile.data ? unitsOf(profile.data.uses_metric_units) : null;
  // Instants read in the athlete's zone, as start_local does (CONTRACT §9); no zone set is UTC to the service too.
  const timeZone = profile.data?.timezone ?? "UTC";
  const mine = !!a && !!profile.data && a.athlete_id === profile.data.id;
  // A team member's, seen by their coach: whose it is comes from the coach's rosters.
  const othersActivity = !!a && !!profile.data && !mine;
  const teams = useCoachedTeams({ enabled: othersActivity });
  const ownerName = othersActivity ? coachedAthlete(teams.data, a.athlete_id)?.name : null;
  const owner = othersActivity && (ownerName ? `${ownerName}’s activity` : teams.isPending ? null : "A team member’s activity");
  const fromFile = a?.source === "upload";
  const streams = useQuery(streamsQuery(activityId, fromFile));
  const saveProblem = useMemo(() => (save.error ? describeSaveProblem(save.error) : null), [save.error]);

  // Found gone while shown (Escape on the download's refusal, Cancel on the form that could not
  // save): the control that had the focus went with the activity, and the keyboard would start
  // again from the top of the page. It goes on from the heading, which says what happened. Only
  // when the focus was lost: a person who clicked or tabbed elsewhere meanwhile keeps their place.
  const header = useRef<HTMLDivElement>(null);
  const wasShown = activity.data !== undefined;
  useEffect(() => {
    if (!missing || editing || !wasShown) return;
    const at = document.activeElement;
    if (at && at !== document.body) return;
    const heading = header.current?.querySelector("h1");
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  }, [missing, editing, wasShown]);

  return (
    <>
      {/* A team member's activity is in no list of the coach's own: back is to the member's list, reached from the teams. */}
      {othersActivity ? (
        <Link
          href={ownerName ? `/teams/athletes/${encodeURIComponent(a.athlete_id)}` : "/teams"}
          className="mb-3 inline-block text-sm text-brand-600 hover:underline"
        >
          {ownerName ? `← ${ownerName}’s activities` : "← Your teams"}
        </Link>
      ) : (
        <Link href="/activities" className="mb-3 inline-block text-sm text-brand-600 hover:underline">
          ← All activities
        </Link>
      )}
      <div ref={header}>
        <PageHeader
          title={a?.name ?? (missing ? "Activity not found" : "Activity")}
          description={
            a
              ? [owner, SPORT_LABELS[a.sport_type], formatLocal(a.start_local, { dateStyle: "full", timeStyle: "short" })].filter(Boolean).join(" · ")
              : undefined
          }
          actions={
            a &&
            (mine || fromFile) &&
            !editing && (
              <div className="flex flex-wrap gap-2">
                {mine && (
                  <Button
                    ref={openerRef}
                    onClick={() => {
                      setEditing(true);
                      setNotice(null);
                    }}
                  >
                    Edit
                  </Button>
                )}
                {fromFile && <DownloadMenu activityId={a.id} gpx={!streams.data || hasPositions(streams.data.streams)} />}
                {mine && <DeleteActivity activityId={a.id} name={a.name} fromFile={fromFile} />}
              </div>
            )
          }
        />
      </div>
      <div className="space-y-6">
        {(activity.isPending || profile.isPending) && <p className="text-sm text-slate-500">Loading…</p>}
        {activity.error && (
          <Notice tone="error">
            {missing ? ACTIVITY_NOT_HERE : activity.error.message}
          </Notice>
        )}
        {profile.error && <Notice tone="error">{profile.error.message}</Notice>}
        {notice && <Notice tone="success">{notice}</Notice>}

        {/* The open form stays, with its message, when a save finds the activity gone. */}
        {activity.data && units && editing && (
          <Card title="Edit activity">
            <EditForm
              activity={activity.data}
              units={units}
              pending={save.isPending}
              error={saveProblem}
              onCancel={() => {
                closeForm();
                save.reset();
              }}
              onSave={(patch) => {
                if (Object.keys(patch).length === 0) {
                  closeForm();
                  setNotice("Nothing changed.");
                } else save.mutate(patch);
              }}
            />
          </Card>
        )}

        {a && units && !editing && (
          <>
            <Headline activity={a} units={units} />
            <Recording activity={a} units={units} />
            <Fields activity={a} units={units} timeZone={timeZone} />
          </>
        )}
      </div>
    </>
  );
}

function EditForm({
  activity,
  units,
  pending,
  error,
  onSave,
  onCancel,
}: {
  activity: ActivityWire;
  units: Units;
  pending: boolean;
  error: Error | null;
  onSave: (patch: Partial<ActivityInput>) => void;
  onCancel: () => void;
}) {
  const [before] = useState(() => toFormValues(activity, units));
  return (
    <ActivityForm
      initial={before}
      units={units}
      pending={pending}
      error={error}
      onSubmit={(input, after) => onSave(changedFields(before, after, input, units))}
      onCancel={onCancel}
    />
  );
}

function Fields({ activity: a, units, timeZone }: { activity: ActivityWire; units: Units; timeZone: string }) {
  const opt = <T,>(v: T | null, show: (v: T) => string) => (v === null ? "—" : show(v));
  const bpm = (hz: number) => `${Math.round(hzToBpm(hz))} bpm`;
  const reading = speedReading(a.sport_type, units);
  const groups: { title: string; rows: [string, string][] }[] = [
    {
      title: "Summary",
      rows: [
        ["Sport type", SPORT_LABELS[a.sport_type]],
        ["Start (local time)", formatLocal(a.start_local)],
        ["Duration", formatDuration(a.elapsed_time_s)],
        ["Moving time", opt(a.moving_time_s, formatDuration)],
        ["Distance", opt(a.distance_m, distanceReading(a.sport_type, units))],
        ["Elevation gain", opt(a.elevation_gain_m, (m) => formatElevation(m, units))],
      ],
    },
    {
      title: "Speed and effort",
      rows: [
        // Pace or speed by sport, as the headline and the laps say it.
        [`Average ${reading.label.toLowerCase()}`, opt(a.average_speed_mps, reading.format)],
        [reading.label === "Pace" ? "Fastest pace" : "Max speed", opt(a.max_speed_mps, reading.format)],
        ["Average heart rate", opt(a.average_heart_rate_hz, bpm)],
        ["Max heart rate", opt(a.max_heart_rate_hz, bpm)],
        ["Average power", opt(a.average_power_w, (w) => `${Math.round(w)} W`)],
        ["Energy", opt(a.energy_j, (j) => `${Math.round(joulesToKcal(j))} kcal`)],
      ],
    },
    {
      title: "Record",
      rows: recordRows(a, timeZone),
    },
  ];
  return (
    <div className="grid gap-6 md:grid-cols-2">
      {groups.map((g) => (
        <Card key={g.title} title={g.title}>
          <dl className="divide-y divide-slate-100 text-sm">
            {g.rows.map(([label, value]) => (
              <div key={label} className="flex justify-between gap-4 py-2">
                <dt className="text-slate-600">{label}</dt>
                <dd className="min-w-0 text-right wrap-anywhere font-medium tabular-nums text-slate-900">{value}</dd>
              </div>
            ))}
          </dl>
        </Card>
      ))}
    </div>
  );
}

/** The numbers a runner or cyclist looks for first, large; a measurement the activity lacks is left out. */
function Headline({ activity: a, units }: { activity: ActivityWire; units: Units }) {
  const reading = speedReading(a.sport_type, units);
  const stats: [string, string | null][] = [
    ["Distance", a.distance_m === null ? null : distanceReading(a.sport_type, units)(a.distance_m)],
    [a.moving_time_s !== null ? "Moving time" : "Time", formatDuration(a.moving_time_s ?? a.elapsed_time_s)],
    [reading.label, a.average_speed_mps === null ? null : reading.format(a.average_speed_mps)],
    ["Elevation gain", a.elevation_gain_m === null ? null : formatElevation(a.elevation_gain_m, units)],
    ["Heart rate", a.average_heart_rate_hz === null ? null : `${Math.round(hzToBpm(a.average_heart_rate_hz))} bpm`],
    ["Power", a.average_power_w === null ? null : `${Math.round(a.average_power_w)} W`],
  ];
  return (
    <dl aria-label="Headline numbers" className="grid grid-cols-2 gap-x-4 gap-y-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:grid-cols-3 lg:grid-cols-6">
      {stats
        .filter((s): s is [string, string] => s[1] !== null)
        .map(([label, value]) => (
          <div key={label} className="min-w-0">
            <dt className="text-xs font-medium uppercase tracking-wide text-slate-600">{label}</dt>
            <dd className="mt-0.5 text-xl font-semibold tabular-nums text-slate-900 sm:text-2xl">{value}</dd>
          </div>
        ))}
    </dl>
  );
}

// Reserved while the samples load, so the page does not jump when they arrive.
const ROUTE_PLACEHOLDER = "aspect-[3/2] w-full rounded-md bg-slate-100";

/** What the file recorded: the route, the charts and the laps. Nothing for an activity typed by hand. */
function Recording({ activity: a, units }: { activity: ActivityWire; units: Units }) {
  const fromFile = a.source === "upload";
  // The sample under the charts' cursor, marked on the route.
  const [cursor] = useState(createSampleCursor);
  const streams = useQuery(streamsQuery(a.id, fromFile));
  const laps = useQuery({
    queryKey: lapsKey(a.id),
    queryFn: () => consoleFetch<{ data: LapWire[] }>(consolePaths.laps(a.id)),
    enabled: fromFile,
    staleTime: Infinity,
  });
  if (!fromFile) return null;

  const s = streams.data?.streams;
  const hasRoute = !!s && hasPositions(s);
  return (
    <div className="grid grid-cols-1 gap-6 lg:grid-cols-5">
      {(streams.isPending || hasRoute) && (
        <div className="min-w-0 lg:col-span-2">
          <Card title="Route">{s ? <RouteMap latlng={s.latlng ?? []} units={units} cursor={cursor} /> : <div className={ROUTE_PLACEHOLDER} />}</Card>
        </div>
      )}
      <div className={`min-w-0 ${streams.isPending || hasRoute ? "lg:col-span-3" : "lg:col-span-5"}`}>
        <Card title="Charts">
          {streams.isPending && <div className="h-64 w-full rounded-md bg-slate-100" aria-hidden />}
          {streams.error && <Notice tone="error">Could not load the samples: {streams.error.message}</Notice>}
          {s && <ActivityCharts streams={s} sport={a.sport_type} units={units} cursor={cursor} />}
        </Card>
      </div>
      <div className="min-w-0 lg:col-span-5">
        <Card title="Laps">
          {laps.isPending && <p className="text-sm text-slate-600">Loading laps…</p>}
          {laps.error && <Notice tone="error">Could not load the laps: {laps.error.message}</Notice>}
          {laps.data && <LapsTable laps={laps.data.data} speed={speedReading(a.sport_type, units)} distance={distanceReading(a.sport_type, units)} units={units} />}
        </Card>
      </div>
    </div>
  );
}
