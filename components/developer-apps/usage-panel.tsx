"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { ConsoleApiError, consoleFetch, isClientError } from "@/components/console/api";
import { useDocumentTitle } from "@/components/console/document-title";
import { Card, PageHeader } from "@/components/ui/card";
import { formatInstant } from "@/components/ui/format";
import { Notice } from "@/components/ui/notice";
import type { DeveloperApp } from "@/lib/oauth-clients/schemas";
import type { AppUsage } from "@/lib/usage/schemas";
import { appKey, appPath, usageKey } from "./shared";
import { UsageChart } from "./usage-chart";
import { AppNotFound } from "./app-not-found";

const WINDOW_LABELS = { "15min": "15-minute window", daily: "Daily window" } as const;
const noRetryOn4xx = (failures: number, err: Error) => !isClientError(err) && failures < 1;

/** An app's requests per day and its rate-limit windows, as GET /v1/app/usage reports them. */
export function AppUsagePanel({ clientId, usageUrl }: { clientId: string; usageUrl: string }) {
  const app = useQuery({ queryKey: appKey(clientId), queryFn: () => consoleFetch<DeveloperApp>(appPath(clientId)), retry: noRetryOn4xx });
  const usage = useQuery({
    queryKey: usageKey(clientId),
    queryFn: () => consoleFetch<AppUsage>(`${appPath(clientId)}/usage`),
    retry: noRetryOn4xx,
    refetchInterval: 30_000,
  });
  const missing = [usage.error, app.error].some((e) => e instanceof ConsoleApiError && e.status === 404);
  // The static "App usage" until the app loads, then whose it is; an app that is not there says so, as its own page does.
  useDocumentTitle(missing ? "App not found" : app.data ? `Usage · ${app.data.name}` : null);

  if (missing) return <AppNotFound clientId={clientId} />;

  return (
    <>
      <Link href={`/developers/apps/${encodeURIComponent(clientId)}`} className="mb-3 inline-block max-w-full text-sm text-brand-600 [overflow-wrap:anywhere] hover:underline">
        ← {app.data?.name ?? "App"}
      </Link>
      <PageHeader
        title={app.data ? `Usage of ${app.data.name}` : "Usage"}
        description="Requests made with every token issued to the app, counted against its rate limits."
      />
      {usage.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {usage.error && <Notice tone="error">{usage.error.message}</Notice>}
      {usage.data && (
        <div className="space-y-6">
          <Card title="Requests per day">
            <UsageChart days={usage.data.days} />
          </Card>
          <Card title="Current rate-limit windows">
            <ul className="grid gap-4 sm:grid-cols-2" aria-label="Rate-limit windows">
              {usage.data.windows.map((w) => {
                const share = Math.min(1, w.used / w.limit);
                return (
                  <li key={w.name} className="space-y-2 rounded-md border border-slate-200 p-3 text-sm" aria-label={WINDOW_LABELS[w.name]}>
                    <p className="font-medium">{WINDOW_LABELS[w.name]}</p>
                    <p className="tabular-nums">
                      <span className="text-lg font-semibold">{w.used.toLocaleString()}</span> of {w.limit.toLocaleString()} used ·{" "}
                      {w.remaining.toLocaleString()} remaining
                    </p>
                    <div className="h-2 overflow-hidden rounded bg-slate-100" aria-hidden="true">
                      <div className={`h-full ${share >= 0.9 ? "bg-red-500" : "bg-brand-500"}`} style={{ width: `${share * 100}%` }} />
                    </div>
                    <p className="text-xs text-slate-500">Resets {formatInstant(w.resets_at)}</p>
                  </li>
                );
              })}
            </ul>
            <p className="mt-4 text-xs text-slate-500">
              The app can read the same figures itself with a client-credentials token:{" "}
              <code className="break-all rounded bg-slate-100 px-1 py-0.5 text-slate-700">GET {usageUrl}</code>
            </p>
          </Card>
        </div>
      )}
    </>
  );
}
