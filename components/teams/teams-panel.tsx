"use client";

import Link from "next/link";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConsoleApiError, consoleFetch } from "@/components/console/api";
import { useSubmissionKey } from "@/components/console/submission-key";
import { AskAgain } from "@/components/ui/ask-again";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { Field } from "@/components/ui/field";
import { formatInstant } from "@/components/ui/format";
import { Form } from "@/components/ui/form";
import { FormError } from "@/components/ui/form-error";
import { FocusedNotice, useOutcome } from "@/components/ui/focused-notice";
import { Notice } from "@/components/ui/notice";
import type { CoachedTeam, RosterEntry } from "@/lib/teams/console-schemas";
import { COACHED_TEAMS_KEY, MEMBERSHIPS_KEY, ROLE_LABELS, formatDay, useCoachedTeams } from "./shared";

/** The teams the person coaches, each with its roster and an invite form, and a form to start one. */
export function TeamsPanel() {
  const teams = useCoachedTeams();
  // Said here, above the teams: the deleted team's card, and the button pressed, are gone.
  const [deleted, sayDeleted] = useOutcome();
  return (
    <div className="grid gap-6 lg:grid-cols-3 lg:items-start">
      <div className="space-y-6 lg:col-span-2">
        {deleted && (
          <FocusedNotice key={deleted.id} tone="success">
            {deleted.text}
          </FocusedNotice>
        )}
        {teams.isPending && <p className="text-sm text-slate-500">Loading…</p>}
        {teams.error && <Notice tone="error">{teams.error.message}</Notice>}
        {teams.data?.length === 0 && (
          <Card>
            <p className="text-sm text-slate-600">
              You do not coach a team yet. Create one, then invite athletes by email: once they accept, you can read their profiles,
              activities and metrics through the API.
            </p>
          </Card>
        )}
        {teams.data?.map((t) => <TeamCard key={t.id} team={t} onDeleted={sayDeleted} />)}
      </div>
      <CreateTeamCard />
    </div>
  );
}

/** A 404 from Remove or Withdraw: the person or the invitation was gone already. */
const isGone = (err: unknown) => err instanceof ConsoleApiError && err.status === 404;

function TeamCard({ team, onDeleted }: { team: CoachedTeam; onDeleted: (text: string) => void }) {
  const qc = useQueryClient();
  const active = team.members.filter((m) => m.status === "active").length;
  const invited = team.members.length - active;
  // One click, as "Disconnect" and "Leave" are: the athlete can be invited again.
  const [done, say] = useOutcome();
  const remove = useMutation({
    mutationFn: (m: RosterEntry) =>
      consoleFetch<null>(
        m.athlete_id
          ? `/api/console/teams/${encodeURIComponent(team.id)}/members/${encodeURIComponent(m.athlete_id)}`
          : `/api/console/teams/${encodeURIComponent(team.id)}/invitations/${encodeURIComponent(m.email)}`,
        { method: "DELETE" },
      ),
    onSuccess: (_, m) => {
      say(m.athlete_id ? `Removed ${m.name ?? m.email} from ${team.name}. You can no longer see their data.` : `Withdrew the invitation to ${m.email}.`);
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
    },
    onError: (err, m) => {
      // Gone already (they left, or another coach was first): what the coach wanted, said so.
      if (isGone(err)) {
        say(m.athlete_id ? `${m.name ?? m.email} is no longer on ${team.name}.` : `The invitation to ${m.email} is no longer open.`);
      }
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
    },
  });
  return (
    <section aria-label={team.name}>
      <Card
        title={team.name}
        actions={
          <span className="text-xs text-slate-500">
            You are {team.role === "admin" ? "an admin" : "a coach"} · {active} {active === 1 ? "member" : "members"}
            {invited > 0 && `, ${invited} invited`}
          </span>
        }
      >
        {done && (
          <div className="-mx-1 mb-3">
            <FocusedNotice key={done.id} tone="success">
              {done.text}
            </FocusedNotice>
          </div>
        )}
        {remove.error && !isGone(remove.error) && (
          <div className="-mx-1 mb-3">
            {/* Its row may be gone with the roster's refresh: the keyboard goes on from here. */}
            <FocusedNotice key={remove.submittedAt} tone="error">
              Could not {remove.variables?.athlete_id ? `remove ${remove.variables.name ?? remove.variables.email}` : `withdraw the invitation to ${remove.variables?.email}`}:{" "}
              {remove.error.message}
            </FocusedNotice>
          </div>
        )}
        <ul className="-mx-4 -mt-4 divide-y divide-slate-100" aria-label={`Members of ${team.name}`}>
          {team.members.map((m) => (
            <MemberRow
              key={m.athlete_id ?? m.email}
              member={m}
              busy={remove.isPending}
              onRemove={m.role === "athlete" ? () => remove.mutate(m) : undefined}
            />
          ))}
        </ul>
        <InviteForm team={team} />
        <DeleteTeam team={team} athletes={active - team.members.filter((m) => m.status === "active" && m.role !== "athlete").length} onDeleted={onDeleted} />
      </Card>
    </section>
  );
}

/**
 * "Delete team", asked once more in words: every membership and invitation goes, and with them
 * the coach's reach; the athletes keep their own data. Deleted elsewhere already (404/403 for a
 * team no longer coached) reads as done.
 */
function DeleteTeam({ team, athletes, onDeleted }: { team: CoachedTeam; athletes: number; onDeleted: (text: string) => void }) {
  const coaches = team.members.filter((m) => m.status === "active" && m.role !== "athlete").length;
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: () => consoleFetch<null>(`/api/console/teams/${encodeURIComponent(team.id)}`, { method: "DELETE" }),
    onSuccess: () => {
      onDeleted(`Deleted ${team.name}. Its athletes keep their data; you no longer see it.`);
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
      void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY });
    },
    onError: (err) => {
      if (err instanceof ConsoleApiError && (err.status === 404 || err.status === 403)) onDeleted(`${team.name} is no longer yours to delete: it was deleted, or you left it.`);
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
      void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY });
    },
  });
  return (
    <AskAgain
      className="mt-4 border-t border-slate-100 pt-4"
      opener="Delete team"
      groupLabel={`Delete ${team.name}`}
      confirm={`Delete ${team.name}`}
      question={
        <>
          Delete {team.name}?{" "}
          {athletes === 0
            ? "Nobody has joined it yet"
            : `${athletes === 1 ? "Its athlete stays" : `Its ${athletes} athletes stay`} on the service with all their data, but you${coaches > 1 ? " and its other coaches" : ""} will no longer see it`}
          , and invitations not yet answered are withdrawn. This cannot be undone.
        </>
      }
      error={
        remove.error &&
        !(remove.error instanceof ConsoleApiError && (remove.error.status === 404 || remove.error.status === 403)) && (
          <Notice tone="error">Could not delete {team.name}: {remove.error.message}</Notice>
        )
      }
      // Deleted: nothing here is to be pressed again while the list catches up.
      busy={remove.isPending || remove.isSuccess}
      onConfirm={() => remove.mutate()}
      onReset={() => remove.reset()}
    />
  );
}

function MemberRow({ member: m, busy, onRemove }: { member: RosterEntry; busy: boolean; onRemove?: () => void }) {
  return (
    <li className="flex flex-wrap items-center justify-between gap-x-4 gap-y-1 px-4 py-3" aria-label={m.name ?? m.email}>
      <div className="min-w-0">
        {/* An athlete who accepted: their activities are the coach's to see. */}
        {m.status === "active" && m.role === "athlete" && m.athlete_id ? (
          <p className="truncate font-medium">
            <Link href={`/teams/athletes/${encodeURIComponent(m.athlete_id)}`} className="text-brand-700 underline hover:text-brand-600">
              {m.name ?? m.email}
            </Link>
          </p>
        ) : (
          <p className="truncate font-medium">{m.name ?? m.email}</p>
        )}
        {/* An invitation shows only the email the coach typed, until it is accepted. */}
        {m.name && <p className="truncate text-xs text-slate-500">{m.email}</p>}
      </div>
      <div className="flex items-center gap-2 text-xs">
        {m.status === "invited" ? (
          <span className="rounded bg-amber-50 px-1.5 py-0.5 font-medium text-amber-800" title={`Invited ${formatInstant(m.invited_at)}`}>
            Invited
          </span>
        ) : (
          m.joined_at && <span className="text-slate-500">Joined {formatDay(m.joined_at)}</span>
        )}
        <span className={`rounded px-1.5 py-0.5 ${m.role === "athlete" ? "bg-slate-100 text-slate-700" : "bg-brand-50 text-brand-700"}`}>
          {ROLE_LABELS[m.role]}
        </span>
        {onRemove && (
          <Button variant="secondary" disabled={busy} onClick={onRemove}>
            {m.status === "invited" ? "Withdraw" : "Remove"}
          </Button>
        )}
      </div>
    </li>
  );
}

function InviteForm({ team }: { team: CoachedTeam }) {
  const qc = useQueryClient();
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const submission = useSubmissionKey();
  const invite = useMutation({
    mutationFn: () =>
      consoleFetch<RosterEntry>(`/api/console/teams/${encodeURIComponent(team.id)}/invitations`, {
        method: "POST",
        body: { email },
        idempotencyKey: submission.keyFor({ email }),
      }),
    onSuccess: (entry) => {
      submission.renew();
      setSent(entry.email);
      setEmail("");
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
    },
  });
  const fieldError = invite.error instanceof ConsoleApiError ? invite.error.fields.email : undefined;
  return (
    <Form
      noValidate
      failure={invite.error}
      className="mt-4 space-y-3 border-t border-slate-100 pt-4"
      onSubmit={(e) => {
        e.preventDefault();
        setSent(null);
        invite.mutate();
      }}
    >
      {sent && (
        <Notice tone="success">
          Invited {sent}. They show as Invited until they accept on their Invitations page; until then you cannot see their data.
        </Notice>
      )}
      <FormError error={invite.error} shown={["email"]} />
      <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
        <div className="flex-1">
          <Field
            label="Email"
            type="email"
            maxLength={254}
            autoComplete="off"
            placeholder="athlete@example.com"
            value={email}
            error={fieldError}
            onChange={(e) => {
              setEmail(e.target.value);
              if (invite.error) invite.reset();
            }}
          />
        </div>
        <Button type="submit" disabled={invite.isPending} className="sm:mt-6">
          Invite athlete
        </Button>
      </div>
    </Form>
  );
}

function CreateTeamCard() {
  const qc = useQueryClient();
  const [name, setName] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const submission = useSubmissionKey();
  const create = useMutation({
    mutationFn: () => consoleFetch<{ id: string; name: string }>("/api/console/teams", { method: "POST", body: { name }, idempotencyKey: submission.keyFor({ name }) }),
    onSuccess: (team) => {
      submission.renew();
      setCreated(team.name);
      setName("");
      void qc.invalidateQueries({ queryKey: COACHED_TEAMS_KEY });
      void qc.invalidateQueries({ queryKey: MEMBERSHIPS_KEY });
    },
  });
  const fields = create.error instanceof ConsoleApiError ? create.error.fields : {};
  return (
    <Card title="New team">
      <Form
        noValidate
        failure={create.error}
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          setCreated(null);
          create.mutate();
        }}
      >
        {created && <Notice tone="success">Created {created}. You are its coach; invite athletes to it by email.</Notice>}
        <FormError error={create.error} shown={["name"]} />
        <Field
          label="Team name"
          value={name}
          maxLength={100}
          placeholder="e.g. Harbor Runners"
          error={fields.name}
          onChange={(e) => setName(e.target.value)}
        />
        <Button type="submit" disabled={create.isPending} className="w-full sm:w-auto lg:w-full">
          Create team
        </Button>
      </Form>
    </Card>
  );
}
