"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConsoleApiError, consoleFetch } from "@/components/console/api";
import { useProfile } from "@/components/profile/use-profile";
import { Button } from "@/components/ui/button";
import { Card, PageHeader } from "@/components/ui/card";
import { formatInstant } from "@/components/ui/format";
import { Notice } from "@/components/ui/notice";
import type { ActivityWire } from "@/lib/activities/schemas";
import { ActivityForm } from "./activity-form";
import { changedFields, toFormValues, type ActivityInput } from "./activity-form-values";
import { ACTIVITIES_KEY, activityKey } from "./query-keys";
import { SPORT_LABELS } from "./sport";
import {
  formatDistance,
  formatDuration,
  formatElevation,
  formatLocal,
  formatPace,
  formatSpeed,
  hzToBpm,
  joulesToKcal,
  unitsOf,
  type Units,
} from "./units";

/** One activity with every field, editable by the athlete it belongs to. */
export function ActivityDetail({ activityId }: { activityId: string }) {
  const qc = useQueryClient();
  const key = activityKey(activityId);
  const activity = useQuery({
    queryKey: key,
    queryFn: () => consoleFetch<ActivityWire>(`/api/console/activities/${encodeURIComponent(activityId)}`),
    // A 404 will not turn into a 200 by asking again; only server trouble is worth a retry.
    retry: (failures, err) => !(err instanceof ConsoleApiError && err.status < 500) && failures < 1,
  });
  const profile = useProfile();
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const save = useMutation({
    mutationFn: (patch: Partial<ActivityInput>) =>
      consoleFetch<ActivityWire>(`/api/console/activities/${encodeURIComponent(activityId)}`, { method: "PATCH", body: patch }),
    onSuccess: (updated) => {
      qc.setQueryData(key, updated);
      void qc.invalidateQueries({ queryKey: ACTIVITIES_KEY, exact: true });
      setEditing(false);
      setNotice("Saved.");
    },
  });

  const a = activity.data;
  const units = profile.data ? unitsOf(profile.data.uses_metric_units) : null;
  const mine = !!a && !!profile.data && a.athlete_id === profile.data.id;

  return (
    <>
      <Link href="/activities" className="mb-3 inline-block text-sm text-brand-600 hover:underline">
        ← All activities
      </Link>
      <PageHeader
        title={a?.name ?? "Activity"}
        description={a ? `${SPORT_LABELS[a.sport_type]} · ${formatLocal(a.start_local, { dateStyle: "full", timeStyle: "short" })}` : undefined}
        actions={
          mine &&
          !editing && (
            <Button
              onClick={() => {
                setEditing(true);
                setNotice(null);
              }}
            >
              Edit
            </Button>
          )
        }
      />
      <div className="space-y-6">
        {(activity.isPending || profile.isPending) && <p className="text-sm text-slate-500">Loading…</p>}
        {activity.error && <Notice tone="error">{activity.error.message}</Notice>}
        {profile.error && <Notice tone="error">{profile.error.message}</Notice>}
        {notice && <Notice tone="success">{notice}</Notice>}

        {a && units && editing && (
          <Card title="Edit activity">
            <EditForm
              activity={a}
              units={units}
              pending={save.isPending}
              error={save.error}
              onCancel={() => {
                setEditing(false);
                save.reset();
              }}
              onSave={(patch) => {
                if (Object.keys(patch).length === 0) {
                  setEditing(false);
                  setNotice("Nothing changed.");
                } else save.mutate(patch);
              }}
            />
          </Card>
        )}

        {a && units && !editing && <Fields activity={a} units={units} />}
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
      onSubmit={(input, after) => onSave(changedFields(activity, before, after, input))}
      onCancel={onCancel}
    />
  );
}

function Fields({ activity: a, units }: { activity: ActivityWire; units: Units }) {
  const opt = <T,>(v: T | null, show: (v: T) => string) => (v === null ? "—" : show(v));
  const bpm = (hz: number) => `${Math.round(hzToBpm(hz))} bpm`;
  const groups: { title: string; rows: [string, string][] }[] = [
    {
      title: "Summary",
      rows: [
        ["Sport type", SPORT_LABELS[a.sport_type]],
        ["Start (local time)", formatLocal(a.start_local)],
        ["Duration", formatDuration(a.elapsed_time_s)],
        ["Moving time", opt(a.moving_time_s, formatDuration)],
        ["Distance", opt(a.distance_m, (m) => formatDistance(m, units))],
        ["Elevation gain", opt(a.elevation_gain_m, (m) => formatElevation(m, units))],
      ],
    },
    {
      title: "Speed and effort",
      rows: [
        units === "metric"
          ? ["Average speed", opt(a.average_speed_mps, (v) => formatSpeed(v, units))]
          : ["Average pace", opt(a.average_speed_mps, (v) => formatPace(v, units))],
        ["Max speed", opt(a.max_speed_mps, (v) => formatSpeed(v, units))],
        ["Average heart rate", opt(a.average_heart_rate_hz, bpm)],
        ["Max heart rate", opt(a.max_heart_rate_hz, bpm)],
        ["Average power", opt(a.average_power_w, (w) => `${Math.round(w)} W`)],
        ["Energy", opt(a.energy_j, (j) => `${Math.round(joulesToKcal(j))} kcal`)],
      ],
    },
    {
      title: "Record",
      rows: [
        ["Source", a.source === "manual" ? "Recorded by hand" : a.source],
        ["Created", formatInstant(a.created_at)],
        ["Last changed", formatInstant(a.updated_at)],
        ["Activity id", a.id],
      ],
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
