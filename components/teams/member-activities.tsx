"use client";

import Link from "next/link";
import { ConsoleApiError } from "@/components/console/api";
import { ActivityList, useActivityPages } from "@/components/activities/activity-list";
import { unitsOf } from "@/components/activities/units";
import { useProfile } from "@/components/profile/use-profile";
import { Card, PageHeader } from "@/components/ui/card";
import { Notice } from "@/components/ui/notice";
import { coachedAthlete, useCoachedTeams } from "./shared";
import { useDocumentTitle } from "@/components/console/document-title";

/** What a coach is told for an athlete they do not reach (never on a team of theirs, or no longer). */
export const MEMBER_NOT_REACHED = "You do not coach this athlete: they are on none of your teams, or have left.";

/**
 * A team member's activities, newest first, for their coach (README "Reach"): each opens the
 * activity's page, where the coach may download it. Figures in the coach's own units.
 */
export function MemberActivities({ athleteId }: { athleteId: string }) {
  const profile = useProfile();
  const teams = useCoachedTeams();
  const pages = useActivityPages(["athlete-activities", athleteId], `/api/console/athletes/${encodeURIComponent(athleteId)}/activities`);
  const { list, activities } = pages;
  const member = coachedAthlete(teams.data, athleteId);
  const name = member?.name ?? member?.email;
  const notReached = list.error instanceof ConsoleApiError && (list.error.status === 404 || list.error.status === 403);
  useDocumentTitle(name ? `${name}’s activities` : notReached ? "Athlete not found" : null);
  const units = profile.data ? unitsOf(profile.data.uses_metric_units) : null;

  return (
    <>
      <Link href="/teams" className="mb-3 inline-block text-sm text-brand-600 hover:underline">
        ← Your teams
      </Link>
      <PageHeader
        title={name ? `${name}’s activities` : notReached ? "Athlete not found" : "Activities"}
        description={member ? `On ${member.team}, newest first. Open one for its route, charts, laps and downloads.` : undefined}
      />
      <Card title="Activities">
        {(list.isPending || profile.isPending) && <p className="text-sm text-slate-500">Loading…</p>}
        {list.error && <Notice tone="error">{notReached ? MEMBER_NOT_REACHED : list.error.message}</Notice>}
        {profile.error && <Notice tone="error">{profile.error.message}</Notice>}
        {list.data && units && activities.length === 0 && <p className="text-sm text-slate-600">No activities yet.</p>}
        {units && <ActivityList pages={pages} units={units} label={name ? `${name}’s activities` : "Activities"} />}
      </Card>
    </>
  );
}
