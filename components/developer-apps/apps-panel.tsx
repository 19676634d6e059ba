"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { useSubmissionKey } from "@/components/console/submission-key";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { useFocusBack } from "@/components/ui/focus-back";
import { FOCUSABLE_ROW, useFocusableRows } from "@/components/ui/focusable-rows";
import { FocusedNotice } from "@/components/ui/focused-notice";
import { formatInstant } from "@/components/ui/format";
import { Notice } from "@/components/ui/notice";
import type { AppWithSecret, DeveloperApp } from "@/lib/oauth-clients/schemas";
import { AppForm, type AppFormValues } from "./app-form";
import { AppLogo } from "./app-logo";
import { SecretReveal } from "./secret-reveal";
import { APP_DELETED_NOTICE_KEY, APPS_KEY, KIND_LABELS, appKey } from "./shared";

/** The apps the developer owns, and the form that registers one. */
export function DeveloperAppsPanel() {
  const qc = useQueryClient();
  const apps = useQuery({ queryKey: APPS_KEY, queryFn: () => consoleFetch<DeveloperApp[]>("/api/console/apps") });
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<AppWithSecret | null>(null);
  const { rowRef, focusRow } = useFocusableRows();
  const { openerRef, close: cancelForm } = useFocusBack<HTMLButtonElement>(open, () => setOpen(false));
  // Arriving from an app just deleted: said once (and focused, FocusedNotice).
  const [deleted] = useState(() => qc.getQueryData<string>(APP_DELETED_NOTICE_KEY) ?? null);
  useEffect(() => {
    if (deleted) qc.removeQueries({ queryKey: APP_DELETED_NOTICE_KEY, exact: true });
  }, [deleted, qc]);

  const submission = useSubmissionKey();
  const register = useMutation({
    mutationFn: (v: AppFormValues) => {
      const body = { ...v, logo_url: v.logo_url || null, homepage_url: v.homepage_url || null };
      return consoleFetch<AppWithSecret>("/api/console/apps", { method: "POST", body, idempotencyKey: submission.keyFor(body) });
    },
    onSuccess: (result) => {
      submission.renew();
      setCreated(result);
      setOpen(false);
      qc.setQueryData(appKey(result.app.client_id), result.app);
      void qc.invalidateQueries({ queryKey: APPS_KEY, exact: true });
    },
  });

  return (
    <div className="space-y-6">
      {deleted && <FocusedNotice tone="success">{deleted}</FocusedNotice>}
      {created && (
        <div className="space-y-2">
          <SecretReveal
            title={`${created.app.name} is registered`}
            clientId={created.app.client_id}
            secret={created.client_secret}
            onDone={() => {
              // Done goes away with the secret: the new app's row in the list takes the focus.
              focusRow(created.app.client_id);
              setCreated(null);
            }}
          />
          <p className="text-sm">
            <Link href={`/developers/apps/${encodeURIComponent(created.app.client_id)}`} className="text-brand-600 hover:underline">
              Open {created.app.name}&apos;s settings →
            </Link>
          </p>
        </div>
      )}

      <Card
        title="Your apps"
        actions={
          !open && (
            <Button
              ref={openerRef}
              onClick={() => {
                register.reset();
                setOpen(true);
              }}
              aria-expanded={open}
            >
              Register app
            </Button>
          )
        }
      >
        {open && (
          <div className="mb-6 rounded-md border border-slate-200 p-4">
            <h3 className="mb-3 font-medium">Register an app</h3>
            <AppForm
              submitLabel="Register"
              pending={register.isPending}
              error={register.error}
              onSubmit={(v) => register.mutate(v)}
              onCancel={cancelForm}
            />
          </div>
        )}
        {apps.isPending && <p className="text-sm text-slate-500">Loading…</p>}
        {apps.error && <Notice tone="error">{apps.error.message}</Notice>}
        {apps.data?.length === 0 && !open && (
          <p className="text-sm text-slate-600">
            No apps yet. Register one to let athletes connect it with OAuth: you get a client_id, and a client secret for a server-side app.
          </p>
        )}
        {apps.data && apps.data.length > 0 && (
          <ul className="-mx-4 -mb-4 divide-y divide-slate-100" aria-label="Apps">
            {apps.data.map((a) => (
              <li
                key={a.client_id}
                ref={rowRef(a.client_id)}
                tabIndex={-1}
                className={`flex items-start gap-3 px-4 py-3 ${FOCUSABLE_ROW}`}
                aria-label={a.name}
              >
                <AppLogo name={a.name} url={a.logo_url} />
                <div className="min-w-0 flex-1 space-y-0.5">
                  <p className="flex flex-wrap items-center gap-x-2 gap-y-1">
                    <Link href={`/developers/apps/${encodeURIComponent(a.client_id)}`} className="min-w-0 font-medium text-brand-700 [overflow-wrap:anywhere] hover:underline">
                      {a.name}
                    </Link>
                    <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700">{KIND_LABELS[a.kind]}</span>
                  </p>
                  <p className="break-all font-mono text-xs text-slate-600">{a.client_id}</p>
                  <p className="text-xs text-slate-500">
                    {a.connected_athletes} {a.connected_athletes === 1 ? "athlete" : "athletes"} connected · Registered {formatInstant(a.created_at)}
                  </p>
                </div>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
