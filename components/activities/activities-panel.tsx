"use client";

import Link from "next/link";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { useSubmissionKey } from "@/components/console/submission-key";
import { useProfile } from "@/components/profile/use-profile";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { useFocusBack } from "@/components/ui/focus-back";
import { FocusedNotice } from "@/components/ui/focused-notice";
import { Notice } from "@/components/ui/notice";
import type { ActivityWire } from "@/lib/activities/schemas";
import { ActivityForm } from "./activity-form";
import { emptyFormValues, type ActivityInput } from "./activity-form-values";
import { ACTIVITIES_KEY, activitiesChanged, DELETED_NOTICE_KEY } from "./query-keys";
import { UploadPanel } from "./upload-panel";
import { WeeklyVolumeChart } from "./weekly-volume-chart";
import { localToday } from "@/lib/time/local";
import { unitsOf } from "./units";
import { ActivityList, useActivityPages } from "./activity-list";


/** The athlete's own activities, newest first, with a form to record one by hand. */
export function ActivitiesPanel() {
  const qc = useQueryClient();
  const profile = useProfile();
  const [recording, setRecording] = useState(false);
  const [recorded, setRecorded] = useState<ActivityWire | null>(null);
  // The form opens in place of "Record activity" (focus in its first field); cancelled or saved,
  // the keyboard goes on from that button again, not from the page's top.
  const { openerRef, close: closeForm } = useFocusBack<HTMLButtonElement>(recording, () => setRecording(false));
  // Arriving from an activity just deleted: said once (and focused, FocusedNotice).
  const [deleted] = useState(() => qc.getQueryData<string>(DELETED_NOTICE_KEY) ?? null);
  useEffect(() => {
    if (deleted) qc.removeQueries({ queryKey: DELETED_NOTICE_KEY, exact: true });
  }, [deleted, qc]);

  const pages = useActivityPages(ACTIVITIES_KEY, "/api/console/activities");
  const { list, activities } = pages;

  const submission = useSubmissionKey();
  const create = useMutation({
    mutationFn: (input: ActivityInput) =>
      consoleFetch<ActivityWire>("/api/console/activities", { method: "POST", body: input, idempotencyKey: submission.keyFor(input) }),
    onSuccess: (activity) => {
      submission.renew();
      setRecorded(activity);
      closeForm();
      activitiesChanged(qc);
    },
  });

  const units = profile.data ? unitsOf(profile.data.uses_metric_units) : null;

  return (
    <div className="space-y-6">
      {deleted && <FocusedNotice tone="success">{deleted}</FocusedNotice>}
      {recorded && (
        <Notice tone="success">
          Recorded “{recorded.name}”.{" "}
          <Link href={`/activities/${recorded.id}`} className="font-medium underline">
            View it
          </Link>
        </Notice>
      )}

      {units && profile.data && <WeeklyVolumeChart units={units} today={localToday(profile.data.timezone ?? "UTC")} />}

      <UploadPanel />

      {recording && units && profile.data && (
        <Card title="Record an activity">
          <ActivityForm
            initial={emptyFormValues(profile.data.timezone ?? "UTC")}
            units={units}
            pending={create.isPending}
            error={create.error}
            onSubmit={(input) => create.mutate(input)}
            onCancel={() => {
              closeForm();
              create.reset();
            }}
          />
        </Card>
      )}

      <Card
        title="Your activities"
        actions={
          !recording && (
            <Button
              ref={openerRef}
              onClick={() => {
                setRecording(true);
                setRecorded(null);
              }}
              disabled={!units}
              aria-expanded={recording}
            >
              Record activity
            </Button>
          )
        }
      >
        {profile.data && (
          <p className="mb-3 text-xs text-slate-500">
            {profile.data.uses_metric_units ? "Kilometres and km/h" : "Miles and minutes per mile"} · times are local
            {profile.data.timezone ? ` (${profile.data.timezone})` : ""} ·{" "}
            <Link href="/settings/profile" className="text-brand-700 underline hover:text-brand-600">
              change
            </Link>
          </p>
        )}
        {(list.isPending || profile.isPending) && <p className="text-sm text-slate-500">Loading…</p>}
        {list.error && <Notice tone="error">{list.error.message}</Notice>}
        {profile.error && <Notice tone="error">{profile.error.message}</Notice>}
        {list.data && units && activities.length === 0 && (
          <p className="text-sm text-slate-600">No activities yet. Upload files from your watch or bike computer, record one by hand, or connect an app that uploads them.</p>
        )}
        {units && <ActivityList pages={pages} units={units} label="Activities" />}
      </Card>
    </div>
  );
}
