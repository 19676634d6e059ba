import { useQuery } from "@tanstack/react-query";
import { consoleFetch } from "@/components/console/api";
import type { CoachedTeam, RosterEntry } from "@/lib/teams/console-schemas";

// Accepting an invitation changes both views: the athlete's teams and the coach's roster.
export const COACHED_TEAMS_KEY = ["teams", "coached"] as const;
export const MEMBERSHIPS_KEY = ["teams", "mine"] as const;

export const ROLE_LABELS: Record<RosterEntry["role"], string> = { athlete: "Athlete", coach: "Coach", admin: "Admin" };

/** The day of an instant, in the viewer's locale and zone. */
export function formatDay(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" });
}

/** The teams the signed-in person coaches, each with its roster: one query for every page that shows them. */
export function useCoachedTeams({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({ queryKey: COACHED_TEAMS_KEY, queryFn: () => consoleFetch<CoachedTeam[]>("/api/console/teams"), enabled });
}

/** An athlete who accepted a place on one of those teams, with the team's name; undefined if none is. */
export function coachedAthlete(teams: CoachedTeam[] | undefined, athleteId: string): (RosterEntry & { team: string }) | undefined {
  for (const t of teams ?? []) {
    const m = t.members.find((m) => m.athlete_id === athleteId && m.status === "active");
    if (m) return { ...m, team: t.name };
  }
  return undefined;
}
