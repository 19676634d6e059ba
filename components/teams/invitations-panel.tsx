"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { FocusedNotice, useOutcome } from "@/components/ui/focused-notice";
import { Notice } from "@/components/ui/notice";
import type { Invitation, Membership, MyMemberships, MyTeam } from "@/lib/teams/console-schemas";
import { COACHED_TEAMS_KEY, MEMBERSHIPS_KEY, ROLE_LABELS, formatDay } from "./shared";

// What a team's coaches may do with a member's data, said where the athlete decides: /v1 lets
// them read the activities with their streams (GPS positions), laps and routes, and export them.
const COACHES_REACH = "your profile, your activities with their routes (GPS positions) and your metrics, and download your activity files";

/**
 * Who sent an invitation, by what they cannot choose: their account's email, beside the name
 * they gave themselves (anyone can call themselves "Cora Haines").
 */
function inviterOf(inv: Invitation): string {
  if (!inv.invited_by_email) return "Someone whose account no longer exists";
  return inv.invited_by ? `${inv.invited_by} (${inv.invited_by_email})` : inv.invited_by_email;
}

/** The person's pending invitations, to accept or decline, and the teams they belong to. */
export function InvitationsPanel() {
  const qc = useQueryClient();
  const mine = useQuery({ queryKey: MEMBERSHIPS_KEY, queryFn: () => consoleFetch<MyMemberships>("/api/console/memberships") });
  const [outcome, say] = useOutcome();
  const respond = useMutation({
    mutationFn: ({ invitation, accept }: { invitation: Invitation; accept: boolean }) =>
      consoleFetch<Membership | null>(`/api/console/invitations/${encodeURIComponent(invitation.team_id)}`, {
        method: accept ? "POST" : "DELETE",
      }),
    onSuccess: (_, { invitation, accept }) => {
      say(
        accept
          ? `You joined ${invitation.team_name}. Its coaches can now see ${COACHES_REACH}.`
          : `You declined the invitation to ${invitation.team_name}.`,
      );
      void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY });
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
    },
    // An invitation withdrawn or answered elsewhere since the page loaded: the list shows what is left.
    onError: () => void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY }),
  });

  // One click leaves, with no confirm(), as "Disconnect" does on the connected apps page: a coach
  // can invite the person again, and the outcome says what changed.
  const leave = useMutation({
    mutationFn: (team: MyTeam) => consoleFetch<null>(`/api/console/memberships/${encodeURIComponent(team.team_id)}`, { method: "DELETE" }),
    onSuccess: (_, team) => {
      say(
        team.role === "athlete"
          ? `You left ${team.team_name}. Its coaches can no longer see your profile, activities, routes or metrics, or download your activity files.`
          : `You left ${team.team_name}. You no longer see its athletes' data.`,
      );
      void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY });
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
    },
    onError: () => void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY }),
  });

  return (
    <div className="space-y-6">
      {/* Accept and Decline go away with their invitation: the keyboard goes on from what happened. */}
      {outcome && (
        <FocusedNotice key={outcome.id} tone="success">
          {outcome.text}
        </FocusedNotice>
      )}
      {respond.error && <Notice tone="error">{respond.error.message}</Notice>}
      {leave.error && (
        <Notice tone="error">
          Could not leave {leave.variables?.team_name}: {leave.error.message}
        </Notice>
      )}
      {mine.error && <Notice tone="error">{mine.error.message}</Notice>}

      <Card title="Invitations">
        {mine.isPending && <p className="text-sm text-slate-500">Loading…</p>}
        {mine.data?.invitations.length === 0 && <p className="text-sm text-slate-600">No pending invitations.</p>}
        {!!mine.data?.invitations.length && (
          <ul className="-mx-4 -my-4 divide-y divide-slate-100" aria-label="Pending invitations">
            {mine.data.invitations.map((inv) => {
              const busy = respond.isPending && respond.variables?.invitation.team_id === inv.team_id;
              return (
                <li key={inv.team_id} aria-label={inv.team_name} className="flex flex-col gap-3 px-4 py-4 sm:flex-row sm:items-center sm:justify-between">
                  <div className="min-w-0 space-y-1">
                    <p className="font-medium [overflow-wrap:anywhere]">{inv.team_name}</p>
                    <p className="text-sm text-slate-600">
                      {inviterOf(inv)} invited you on {formatDay(inv.invited_at)}. If you accept, the team&apos;s coaches can see {COACHES_REACH}.
                    </p>
                  </div>
                  <div className="flex shrink-0 gap-2">
                    <Button disabled={respond.isPending} onClick={() => respond.mutate({ invitation: inv, accept: true })} aria-busy={busy}>
                      Accept
                    </Button>
                    <Button variant="secondary" disabled={respond.isPending} onClick={() => respond.mutate({ invitation: inv, accept: false })}>
                      Decline
                    </Button>
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </Card>

      <Card title="Your teams">
        {mine.isPending && <p className="text-sm text-slate-500">Loading…</p>}
        {mine.data?.teams.length === 0 && <p className="text-sm text-slate-600">You are not on a team. A coach can invite you by your email.</p>}
        {!!mine.data?.teams.length && (
          <ul className="-mx-4 -my-4 divide-y divide-slate-100" aria-label="Your teams">
            {mine.data.teams.map((t) => (
              <li key={t.team_id} aria-label={t.team_name} className="flex flex-wrap items-center justify-between gap-2 px-4 py-3">
                <div className="min-w-0">
                  <p className="font-medium [overflow-wrap:anywhere]">{t.team_name}</p>
                  <p className="text-xs text-slate-500">
                    {ROLE_LABELS[t.role]}
                    {t.joined_at && ` · joined ${formatDay(t.joined_at)}`}
                  </p>
                </div>
                {/* The service refuses to let a team's only coach go: no button that can only fail. */}
                {t.can_leave ? (
                  <Button
                    variant="secondary"
                    disabled={leave.isPending}
                    aria-busy={leave.isPending && leave.variables?.team_id === t.team_id}
                    onClick={() => leave.mutate(t)}
                  >
                    Leave
                  </Button>
                ) : (
                  <p className="text-sm text-slate-600">You {t.role === "admin" ? "run" : "coach"} this team.</p>
                )}
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
