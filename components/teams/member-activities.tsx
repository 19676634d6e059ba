"use client";

import Link from "next/link";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { ConsoleApiError, consoleFetch, isClientError } from "@/components/console/api";
import { ActivityRow } from "@/components/activities/activity-row";
import { unitsOf } from "@/components/activities/units";
import { useProfile } from "@/components/profile/use-profile";
import { Button } from "@/components/ui/button";
import { Card, PageHeader } from "@/components/ui/card";
import { Notice } from "@/components/ui/notice";
import type { ActivityWire } from "@/lib/activities/schemas";
import type { CoachedTeam } from "@/lib/teams/console-schemas";
import { COACHED_TEAMS_KEY } from "./shared";

type ActivityPage = { data: ActivityWire[]; next_cursor: string | null };

const PAGE_SIZE = 20;

/** What a coach is told for an athlete they do not reach (never on a team of theirs, or no longer). */
export const MEMBER_NOT_REACHED = "You do not coach this athlete: they are on none of your teams, or have left.";

/**
 * A team member's activities, newest first, for their coach (README "Reach"): each opens the
 * activity's page, where the coach may download it. Figures in the coach's own units.
 */
export function MemberActivities({ athleteId }: { athleteId: string }) {
  const profile = useProfile();
  const teams = useQuery({ queryKey: COACHED_TEAMS_KEY, queryFn: () => consoleFetch<CoachedTeam[]>("/api/console/teams") });
  const list = useInfiniteQuery({
    queryKey: ["athlete-activities", athleteId],
    queryFn: ({ pageParam }) =>
      consoleFetch<ActivityPage>(
        `/api/console/athletes/${encodeURIComponent(athleteId)}/activities?limit=${PAGE_SIZE}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ""}`,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    // Not reached will not turn into reached by asking again.
    retry: (failures, err) => !isClientError(err) && failures < 1,
  });
  const member = teams.data?.flatMap((t) => t.members.map((m) => ({ ...m, team: t.name }))).find((m) => m.athlete_id === athleteId && m.status === "active");
  const name = member?.name ?? member?.email;
  const notReached = list.error instanceof ConsoleApiError && (list.error.status === 404 || list.error.status === 403);
  useEffect(() => {
    if (name) document.title = `${name}’s activities · Athlete Activity Service`;
    else if (notReached) document.title = "Athlete not found · Athlete Activity Service";
  }, [name, notReached]);
  const units = profile.data ? unitsOf(profile.data.uses_metric_units) : null;
  const activities = list.data?.pages.flatMap((p) => p.data) ?? [];

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
        {units && activities.length > 0 && (
          <ul className="-mx-4 divide-y divide-slate-100" aria-label={name ? `${name}’s activities` : "Activities"}>
            {activities.map((a) => (
              <ActivityRow key={a.id} activity={a} units={units} />
            ))}
          </ul>
        )}
        {list.hasNextPage && (
          <div className="mt-4 flex justify-center">
            <Button variant="secondary" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
              Load more
            </Button>
          </div>
        )}
      </Card>
    </>
  );
}
