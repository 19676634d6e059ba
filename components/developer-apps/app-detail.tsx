"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { ConsoleApiError, consoleFetch, isClientError } from "@/components/console/api";
import { useFocusBack } from "@/components/ui/focus-back";
import { AskAgain } from "@/components/ui/ask-again";
import { Button } from "@/components/ui/button";
import { Card, PageHeader } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { FocusedNotice, useOutcome } from "@/components/ui/focused-notice";
import { formatInstant } from "@/components/ui/format";
import { useOneAtATime } from "@/components/ui/one-at-a-time";
import { Notice } from "@/components/ui/notice";
import type { AppWithSecret, DeveloperApp } from "@/lib/oauth-clients/schemas";
import { AppForm, type AppFormValues } from "./app-form";
import { AppLogo } from "./app-logo";
import { SecretReveal } from "./secret-reveal";
import { APP_DELETED_NOTICE_KEY, APPS_KEY, KIND_LABELS, appChanges, appKey, appPath } from "./shared";
import { useDocumentTitle } from "@/components/console/document-title";
import { AppNotFoundHeader } from "./app-not-found";

type Endpoints = { authorize: string; token: string; discovery: string; api: string };

/** One app the developer owns: credentials, settings, secret rotation and deletion. */
export function DeveloperAppDetail({ clientId, endpoints }: { clientId: string; endpoints: Endpoints }) {
  const qc = useQueryClient();
  const router = useRouter();
  const key = appKey(clientId);
  const app = useQuery({
    queryKey: key,
    queryFn: () => consoleFetch<DeveloperApp>(appPath(clientId)),
    retry: (failures, err) => !isClientError(err) && failures < 1,
  });
  const [editing, setEditing] = useState(false);
  const { openerRef, close: cancelForm } = useFocusBack<HTMLButtonElement>(editing, () => setEditing(false));
  const [notice, setNotice] = useOutcome();
  const [rotated, setRotated] = useState<string | null>(null);
  // The new secret's "Done" goes away with it: the keyboard goes on from the button that rotated it.
  const rotateRef = useRef<HTMLButtonElement>(null);

  const save = useMutation({
    mutationFn: (changes: ReturnType<typeof appChanges>) => consoleFetch<DeveloperApp>(appPath(clientId), { method: "PATCH", body: changes }),
    onSuccess: (updated) => {
      qc.setQueryData(key, updated);
      void qc.invalidateQueries({ queryKey: APPS_KEY, exact: true });
      setEditing(false);
      setNotice("Saved. New authorization requests use these settings at once.");
    },
  });
  const submit = (v: AppFormValues) => {
    const changes = app.data ? appChanges(app.data, v) : {};
    if (Object.keys(changes).length) return save.mutate(changes);
    // Closed like a save: the notice takes the focus.
    setEditing(false);
    setNotice("Nothing changed.");
  };
  const rotate = useMutation({
    mutationFn: () => consoleFetch<AppWithSecret>(`${appPath(clientId)}/rotate-secret`, { method: "POST" }),
    onSuccess: (r) => {
      qc.setQueryData(key, r.app);
      setRotated(r.client_secret);
      setNotice(null);
    },
  });
  // From the first click on: a second in the same instant would rotate twice, and the secret
  // shown (the first rotation's) would no longer work.
  const oneRotation = useOneAtATime();
  const remove = useMutation({
    mutationFn: (_name: string) => consoleFetch(appPath(clientId), { method: "DELETE" }),
    // Back to the list, which says what was deleted (the notice is handed over in the query cache).
    onSuccess: (_, name) => {
      qc.removeQueries({ queryKey: key });
      void qc.invalidateQueries({ queryKey: APPS_KEY, exact: true });
      qc.setQueryData(APP_DELETED_NOTICE_KEY, `Deleted ${name}: every athlete who authorized it is disconnected, and its tokens no longer work.`);
      router.push("/developers/apps");
    },
  });

  const a = app.data;
  const missing = app.error instanceof ConsoleApiError && app.error.status === 404;
  // The page's title is the static "App" until the app loads, then its name; an app that is not there says so.
  useDocumentTitle(missing ? "App not found" : (a?.name ?? null));
  return (
    <>
      <Link href="/developers/apps" className="mb-3 inline-block text-sm text-brand-600 hover:underline">
        ← All apps
      </Link>
      {app.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {missing ? (
        <AppNotFoundHeader clientId={clientId} />
      ) : (
        app.error && <Notice tone="error">{app.error.message}</Notice>
      )}
      {a && (
        <>
          <PageHeader
            title={a.name}
            description={
              <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
                <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700">{KIND_LABELS[a.kind]}</span>
                <span>
                  {a.connected_athletes} {a.connected_athletes === 1 ? "athlete" : "athletes"} connected · Registered {formatInstant(a.created_at)}
                </span>
              </span>
            }
            actions={
              <nav aria-label="App pages" className="flex gap-2">
                <Link
                  href={`/developers/apps/${encodeURIComponent(a.client_id)}/usage`}
                  className="rounded-md border border-slate-300 bg-white px-3.5 py-2 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-100"
                >
                  Usage
                </Link>
                <Link
                  href={`/developers/apps/${encodeURIComponent(a.client_id)}/webhooks`}
                  className="rounded-md border border-slate-300 bg-white px-3.5 py-2 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-100"
                >
                  Webhooks
                </Link>
              </nav>
            }
          />
          <div className="space-y-6">
            {rotated && (
              <SecretReveal
                title="New client secret"
                clientId={a.client_id}
                secret={rotated}
                onDone={() => {
                  setRotated(null);
                  rotateRef.current?.focus();
                }}
              />
            )}
            {/* Save goes away with the form: the keyboard goes on from what it did. */}
            {notice && (
              <FocusedNotice key={notice.id} tone="success">
                {notice.text}
              </FocusedNotice>
            )}

            <Card title="Credentials">
              <dl className="space-y-4 text-sm">
                <div>
                  <dt className="font-medium text-slate-700">client_id</dt>
                  <dd className="mt-1 flex flex-wrap items-center gap-2">
                    <code className="break-all rounded bg-slate-100 px-2 py-1 font-mono">{a.client_id}</code>
                    <CopyButton text={a.client_id} label="Copy client_id" />
                  </dd>
                </div>
                <div>
                  <dt className="font-medium text-slate-700">client_secret</dt>
                  <dd className="mt-1 space-y-2">
                    {a.kind === "confidential" ? (
                      <>
                        <p className="text-slate-600">
                          Stored only as a hash; it was shown once. Rotating makes a new one and the current one stops working at once, as do
                          the app&apos;s client-credentials tokens it obtained. Athletes&apos; tokens already issued keep working.
                        </p>
                        {rotate.error && <Notice tone="error">{rotate.error.message}</Notice>}
                        <Button
                          ref={rotateRef}
                          variant="secondary"
                          disabled={rotate.isPending}
                          // One click, with no confirm(): CONTRACT §9 names the action, and the text above
                          // says what it does before it is pressed.
                          onClick={() => oneRotation(() => rotate.mutateAsync())}
                        >
                          Rotate secret
                        </Button>
                      </>
                    ) : (
                      <p className="text-slate-600">None: a public app proves itself with PKCE (S256) on every authorization.</p>
                    )}
                  </dd>
                </div>
              </dl>
            </Card>

            <Card
              title="Settings"
              actions={
                !editing && (
                  <Button
                    ref={openerRef}
                    variant="secondary"
                    onClick={() => {
                      save.reset();
                      setNotice(null);
                      setEditing(true);
                    }}
                  >
                    Edit
                  </Button>
                )
              }
            >
              {editing ? (
                <AppForm
                  kindFixed
                  initial={{
                    name: a.name,
                    kind: a.kind,
                    redirect_uris: a.redirect_uris,
                    logo_url: a.logo_url ?? "",
                    homepage_url: a.homepage_url ?? "",
                  }}
                  submitLabel="Save"
                  pending={save.isPending}
                  error={save.error}
                  onSubmit={submit}
                  onCancel={cancelForm}
                />
              ) : (
                <dl className="space-y-3 text-sm">
                  <Item label="Name">
                    <span className="flex items-center gap-2">
                      <AppLogo name={a.name} url={a.logo_url} size={28} />
                      <span className="min-w-0 [overflow-wrap:anywhere]">{a.name}</span>
                    </span>
                  </Item>
                  <Item label="Redirect URIs">
                    <ul className="space-y-1" aria-label="Redirect URIs">
                      {a.redirect_uris.map((u) => (
                        <li key={u} className="break-all font-mono text-xs">
                          {u}
                        </li>
                      ))}
                    </ul>
                  </Item>
                  <Item label="Logo URL">{a.logo_url ?? <span className="text-slate-500">None</span>}</Item>
                  <Item label="Homepage">{a.homepage_url ?? <span className="text-slate-500">None</span>}</Item>
                </dl>
              )}
            </Card>

            <Card title="Endpoints">
              <dl className="space-y-3 text-sm">
                <Item label="Authorization" mono>
                  {endpoints.authorize}
                </Item>
                <Item label="Token" mono>
                  {endpoints.token}
                </Item>
                <Item label="Discovery" mono>
                  {endpoints.discovery}
                </Item>
                <Item label="API (resource)" mono>
                  {endpoints.api}
                </Item>
              </dl>
            </Card>

            <Card title="Delete app">
              <div className="space-y-3 text-sm">
                <p className="text-slate-600 [overflow-wrap:anywhere]">
                  Deleting <bdi>{a.name}</bdi> disconnects every athlete who authorized it
                  {a.connected_athletes > 0 && ` (${a.connected_athletes} now)`}: its access and refresh tokens stop working at once. This cannot be
                  undone.
                </p>
                <AskAgain
                  opener="Delete app"
                  groupLabel={`Delete ${a.name}`}
                  confirm={`Delete ${a.name}`}
                  question={
                    <>
                      Delete <bdi>{a.name}</bdi>?{" "}
                      {a.connected_athletes === 0
                        ? "No athlete has authorized it now"
                        : `${a.connected_athletes === 1 ? "The athlete" : `All ${a.connected_athletes} athletes`} who authorized it ${a.connected_athletes === 1 ? "is" : "are"} disconnected`}
                      ; its webhook subscriptions are deleted and every token issued to it stops working. This cannot be undone.
                    </>
                  }
                  error={remove.error && <Notice tone="error">Could not delete {a.name}: {remove.error.message}</Notice>}
                  // Deleted: the page moves on to the list.
                  busy={remove.isPending || remove.isSuccess}
                  onConfirm={() => remove.mutate(a.name)}
                  onReset={() => remove.reset()}
                />
              </div>
            </Card>
          </div>
        </>
      )}
    </>
  );
}

/** A label and its value: stacked on a phone, side by side from `sm`. */
function Item({ label, mono, children }: { label: string; mono?: boolean; children: React.ReactNode }) {
  return (
    <div className="sm:grid sm:grid-cols-[10rem_1fr] sm:gap-4">
      <dt className="font-medium text-slate-700">{label}</dt>
      <dd className={`mt-0.5 break-all sm:mt-0 ${mono ? "font-mono text-xs sm:pt-0.5" : ""}`}>{children}</dd>
    </div>
  );
}
