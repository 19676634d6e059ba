"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { AppLogo } from "@/components/developer-apps/app-logo";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { formatInstant } from "@/components/ui/format";
import { FocusedNotice } from "@/components/ui/focused-notice";
import { Notice } from "@/components/ui/notice";
import type { ConnectedApp } from "@/lib/oauth-grants/schemas";

const KEY = ["connected-apps"] as const;

/** The apps the athlete has authorized, each with what it may do and a way to end it. */
export function ConnectedAppsPanel() {
  const qc = useQueryClient();
  const apps = useQuery({ queryKey: KEY, queryFn: () => consoleFetch<ConnectedApp[]>("/api/console/connected-apps") });
  const [done, setDone] = useState<string | null>(null);
  // One click disconnects, with no confirm(): CONTRACT §9 names "Disconnect" as the button that
  // does it, and a script or journey that clicks it by name gets no answer to a native dialog.
  const disconnect = useMutation({
    mutationFn: (a: ConnectedApp) => consoleFetch(`/api/console/connected-apps/${encodeURIComponent(a.grant_id)}`, { method: "DELETE" }),
    // Pending until the app has left the list, so its button cannot be pressed twice.
    onSuccess: (_, a) => {
      setDone(a.name);
      return qc.invalidateQueries({ queryKey: KEY });
    },
    onError: () => void qc.invalidateQueries({ queryKey: KEY }),
  });

  return (
    <div className="space-y-4">
      {done && (
        <FocusedNotice key={done} tone="success">
          Disconnected {done}. It can no longer read or change your data; to use it again, connect it from the app.
        </FocusedNotice>
      )}
      {disconnect.error && (
        <Notice tone="error">
          Could not disconnect {disconnect.variables?.name}: {disconnect.error.message}
        </Notice>
      )}
      {apps.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {apps.error && <Notice tone="error">{apps.error.message}</Notice>}
      {apps.data?.length === 0 && (
        <Card>
          <p className="text-sm text-slate-600">
            No apps are connected. When you allow an app to use your account, it shows here with what it may do, and you can disconnect it at
            any time.
          </p>
        </Card>
      )}
      {apps.data && apps.data.length > 0 && (
        <ul className="space-y-4" aria-label="Connected apps">
          {apps.data.map((a) => (
            <li key={a.grant_id} aria-label={a.name}>
              <ConnectedAppCard
                app={a}
                pending={disconnect.isPending}
                disconnecting={disconnect.isPending && disconnect.variables?.grant_id === a.grant_id}
                onDisconnect={() => {
                  setDone(null);
                  disconnect.mutate(a);
                }}
              />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ConnectedAppCard({
  app: a,
  pending,
  disconnecting,
  onDisconnect,
}: {
  app: ConnectedApp;
  pending: boolean;
  disconnecting: boolean;
  onDisconnect: () => void;
}) {
  return (
    <Card>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <div className="flex min-w-0 flex-1 items-start gap-3">
          <AppLogo name={a.name} url={a.kind === "assistant" ? null : a.logo_url} size={44} />
          <div className="min-w-0 flex-1 space-y-2">
            <div>
              <h2 className="font-semibold [overflow-wrap:anywhere]">
                <bdi>{a.name}</bdi>
                {a.host && <span className="font-normal text-slate-600"> from {a.host}</span>}
              </h2>
              {a.kind === "assistant" && <p className="text-xs text-slate-600">Assistant · registered itself, not reviewed by Athlete Activity Service</p>}
              {a.homepage_url && a.kind === "app" && (
                <a href={a.homepage_url} target="_blank" rel="noopener noreferrer" className="break-all text-xs text-brand-600 hover:underline">
                  {a.homepage_url}
                </a>
              )}
            </div>
            <div>
              <p className="text-sm font-medium text-slate-700">It can:</p>
              <ul className="mt-1 list-disc space-y-0.5 pl-5 text-sm text-slate-700">
                {a.scopes.map((s) => (
                  <li key={s.name}>
                    {s.plain} <span className="font-mono text-xs text-slate-500">({s.name})</span>
                  </li>
                ))}
              </ul>
            </div>
            <p className="text-xs text-slate-600">
              Authorized {formatInstant(a.authorized_at)}
              {a.updated_at !== a.authorized_at && ` · Last changed ${formatInstant(a.updated_at)}`}
              {` · Last used ${a.last_used_at ? formatInstant(a.last_used_at) : "never"}`}
            </p>
          </div>
        </div>
        <Button variant="danger" className="self-start sm:shrink-0" disabled={pending} onClick={onDisconnect}>
          {disconnecting ? "Disconnecting…" : "Disconnect"}
        </Button>
      </div>
    </Card>
  );
}
