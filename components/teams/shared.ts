import type { RosterEntry } from "@/lib/teams/console-schemas";

// Accepting an invitation changes both views: the athlete's teams and the coach's roster.
export const COACHED_TEAMS_KEY = ["teams", "coached"] as const;
export const MEMBERSHIPS_KEY = ["teams", "mine"] as const;

export const ROLE_LABELS: Record<RosterEntry["role"], string> = { athlete: "Athlete", coach: "Coach", admin: "Admin" };

/** The day of an instant, in the viewer's locale and zone. */
export function formatDay(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" });
}
