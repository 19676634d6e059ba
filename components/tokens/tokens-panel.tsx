"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { useFocusBack } from "@/components/ui/focus-back";
import { FOCUSABLE_ROW, useFocusableRows } from "@/components/ui/focusable-rows";
import { ChoiceGroup, Field, SelectField } from "@/components/ui/field";
import { FocusedNotice } from "@/components/ui/focused-notice";
import { Form } from "@/components/ui/form";
import { FormError } from "@/components/ui/form-error";
import { Notice } from "@/components/ui/notice";
import { ConsoleApiError, consoleFetch } from "@/components/console/api";
import { useSubmissionKey } from "@/components/console/submission-key";
import { CopyButton } from "@/components/ui/copy-button";
import { formatInstant } from "@/components/ui/format";
import { PAT_NAME_MAX_LENGTH, type PatSummary } from "@/lib/tokens/schemas";
import { ScrollRegion } from "@/components/ui/scroll-region";

type Props = { scopes: { name: string; plain: string }[]; apiBaseUrl: string };

export function TokensPanel({ scopes, apiBaseUrl }: Props) {
  const qc = useQueryClient();
  const tokens = useQuery({ queryKey: ["tokens"], queryFn: () => consoleFetch<PatSummary[]>("/api/console/tokens") });
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<{ token: string; summary: PatSummary } | null>(null);
  const { rowRef, focusRow } = useFocusableRows();
  const { openerRef, close: cancelForm } = useFocusBack<HTMLButtonElement>(open, () => setOpen(false));

  // One click revokes, with no confirm(): CONTRACT §9 names "Revoke" as the button that does it,
  // and a script or journey that clicks it by name gets no answer to a native dialog.
  const revoke = useMutation({
    mutationFn: (t: PatSummary) => consoleFetch(`/api/console/tokens/${t.id}`, { method: "DELETE" }),
    // Pending until the list shows the token revoked, so the button cannot be pressed twice.
    // Then the token's row takes the focus its Revoke button had (the button is gone).
    onSuccess: async (_, t) => {
      await qc.invalidateQueries({ queryKey: ["tokens"] });
      focusRow(t.id);
    },
    // Refused, most often because another tab (or the API) revoked it already: the list is asked
    // again so the row says what holds now, and if its Revoke button went away with that, the row
    // takes the focus the button had.
    onError: async (_, t) => {
      await qc.invalidateQueries({ queryKey: ["tokens"] });
      const now = qc.getQueryData<PatSummary[]>(["tokens"])?.find((x) => x.id === t.id);
      if (now?.revoked_at) focusRow(t.id);
    },
  });

  return (
    <div className="space-y-6">
      {created && (
        <Card title="Your new token">
          <div className="space-y-3">
            {/* The form and its Create button went away: the keyboard goes on from the new token. */}
            <FocusedNotice key={created.summary.id} tone="warning">
              Copy it now. It is shown only once and cannot be recovered.
            </FocusedNotice>
            <div className="flex flex-wrap items-center gap-2">
              <code data-testid="new-token" className="break-all rounded bg-slate-100 px-2 py-1 font-mono text-sm">
                {created.token}
              </code>
              <CopyButton text={created.token} />
            </div>
            <p className="text-sm text-slate-600">Try it:</p>
            <ScrollRegion as="pre" label="Example request" className="overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100">
              {`curl -H "Authorization: Bearer ${created.token}" \\\n  ${apiBaseUrl}/athletes/me`}
            </ScrollRegion>
            <Button
              variant="secondary"
              onClick={() => {
                // This button goes away with the token: its row in the list takes the focus.
                focusRow(created.summary.id);
                setCreated(null);
              }}
            >
              Done
            </Button>
          </div>
        </Card>
      )}

      <Card
        title="Tokens"
        actions={
          !open && (
            <Button ref={openerRef} onClick={() => setOpen(true)} aria-expanded={open}>
              Create token
            </Button>
          )
        }
      >
        {open && (
          <CreateTokenForm
            scopes={scopes}
            onCancel={cancelForm}
            onCreated={(c) => {
              setCreated(c);
              setOpen(false);
              void qc.invalidateQueries({ queryKey: ["tokens"] });
            }}
          />
        )}
        {tokens.isPending && <p className="text-sm text-slate-500">Loading…</p>}
        {tokens.error && <Notice tone="error">{tokens.error.message}</Notice>}
        {revoke.error && (
          <Notice tone="error">
            Could not revoke “{revoke.variables?.name}”: {revoke.error.message}
          </Notice>
        )}
        {tokens.data && tokens.data.length === 0 && !open && (
          <p className="text-sm text-slate-600">No tokens yet. Create one to call the API from a script.</p>
        )}
        {tokens.data && tokens.data.length > 0 && (
          <ul className="divide-y divide-slate-100" aria-label="Personal access tokens">
            {tokens.data.map((t) => {
              const expired = t.expires_at !== null && new Date(t.expires_at) < new Date();
              const state = t.revoked_at ? "Revoked" : expired ? "Expired" : "Active";
              return (
                <li
                  key={t.id}
                  ref={rowRef(t.id)}
                  tabIndex={-1}
                  className={`flex flex-wrap items-start justify-between gap-3 py-3 ${FOCUSABLE_ROW}`}
                  aria-label={t.name}
                >
                  <div className="min-w-0 space-y-1">
                    <p className="font-medium [overflow-wrap:anywhere]">
                      {t.name}{" "}
                      <span
                        className={`ml-1 rounded px-1.5 py-0.5 text-xs ${state === "Active" ? "bg-emerald-50 text-emerald-700" : "bg-slate-100 text-slate-600"}`}
                      >
                        {state}
                      </span>
                    </p>
                    <p className="font-mono text-xs text-slate-600">{t.display}</p>
                    <p className="text-xs text-slate-600">{t.scopes.join(" · ")}</p>
                    <p className="text-xs text-slate-500">
                      Created {formatInstant(t.created_at)} · {t.expires_at ? `Expires ${formatInstant(t.expires_at)}` : "No expiry"} ·{" "}
                      {t.last_used_at ? `Last used ${formatInstant(t.last_used_at)}` : "Never used"}
                    </p>
                  </div>
                  {!t.revoked_at && (
                    <Button variant="danger" disabled={revoke.isPending} onClick={() => revoke.mutate(t)}>
                      {revoke.isPending && revoke.variables?.id === t.id ? "Revoking…" : "Revoke"}
                    </Button>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </Card>
    </div>
  );
}

function CreateTokenForm({
  scopes,
  onCreated,
  onCancel,
}: {
  scopes: Props["scopes"];
  onCreated: (c: { token: string; summary: PatSummary }) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<string[]>(["athlete.read", "activities.read"]);
  // Valid until revoked unless the person chooses an expiry (SPEC §3, CONTRACT §6).
  const [expiry, setExpiry] = useState("none");
  const submission = useSubmissionKey();
  const create = useMutation({
    mutationFn: () => {
      const body = { name, scopes: chosen, expires_in_days: expiry === "none" ? null : Number(expiry) };
      return consoleFetch<{ token: string; summary: PatSummary }>("/api/console/tokens", { method: "POST", body, idempotencyKey: submission.keyFor(body) });
    },
    onSuccess: (c) => {
      submission.renew();
      onCreated(c);
    },
  });
  const fields = create.error instanceof ConsoleApiError ? create.error.fields : {};
  return (
    <Form
      failure={create.error}
      className="mb-6 space-y-4 rounded-md border border-slate-200 p-4"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <FormError error={create.error} shown={["name", "scopes"]} />
      {/* Opened in place of "Create token": the keyboard goes on in its first field. */}
      <Field
        label="Name"
        value={name}
        maxLength={PAT_NAME_MAX_LENGTH}
        onChange={(e) => setName(e.target.value)}
        error={fields.name}
        placeholder="e.g. training export script"
        autoFocus
      />
      <ChoiceGroup legend="Scopes" error={fields.scopes}>
        {(boxProps) => (
          <div className="mt-2 grid gap-2 sm:grid-cols-2">
            {scopes.map((s) => {
              // Named by the scope alone (CONTRACT's names), described by its plain words.
              const plainId = `scope-plain-${s.name.replace(".", "-")}`;
              return (
                <label key={s.name} className="flex items-start gap-2 rounded border border-slate-200 p-2 text-sm">
                  <input
                    type="checkbox"
                    className="mt-0.5"
                    {...boxProps}
                    aria-label={s.name}
                    aria-describedby={[boxProps["aria-describedby"], plainId].filter(Boolean).join(" ")}
                    checked={chosen.includes(s.name)}
                    onChange={(e) => setChosen((c) => (e.target.checked ? [...c, s.name] : c.filter((x) => x !== s.name)))}
                  />
                  <span>
                    <span className="font-mono text-xs">{s.name}</span>
                    <span id={plainId} className="block text-slate-600">
                      {s.plain}
                    </span>
                  </span>
                </label>
              );
            })}
          </div>
        )}
      </ChoiceGroup>
      <SelectField label="Expiry" value={expiry} onChange={(e) => setExpiry(e.target.value)}>
        <option value="none">No expiry</option>
        <option value="7">7 days</option>
        <option value="30">30 days</option>
        <option value="90">90 days</option>
        <option value="365">365 days</option>
      </SelectField>
      <div className="flex gap-2">
        {/* "Create token" as CONTRACT names it: the button that opened the form is gone while it is open. */}
        <Button type="submit" disabled={create.isPending}>
          Create token
        </Button>
        <Button type="button" variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </Form>
  );
}
