import type { Ctx } from "../auth/actor";
import { dailyCounts, peekRateLimit } from "../http/rate-limit";
import { loadOwnedApp } from "../oauth-clients/owned-app";
import { USAGE_DAYS, type AppUsage } from "./schemas";

const DAY_MS = 86_400_000;

/**
 * An app's requests per UTC day over the last 30 days and its current rate-limit windows,
 * read from the counters the rate limiter keeps (bucket `app:{client_id}`), without counting
 * a request. An app token reads its own app; a person reads an app they own, and any other
 * is 404.
 */
export async function getAppUsage({ ctx, clientId, nowMs = Date.now() }: { ctx: Ctx; clientId?: string; nowMs?: number }): Promise<AppUsage> {
  let id: string;
  if (ctx.actor.kind === "app") {
    id = ctx.actor.clientId;
  } else {
    id = (await loadOwnedApp(ctx.db, ctx.actor.userId, clientId ?? "")).clientId;
  }
  const bucket = `app:${id}`;
  const counted = new Map((await dailyCounts(ctx.db, bucket, USAGE_DAYS, nowMs)).map((d) => [d.date, d.requests]));
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const days = Array.from({ length: USAGE_DAYS }, (_, i) => {
    const date = new Date(today - (USAGE_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10);
    return { date, requests: counted.get(date) ?? 0 };
  });
  const windows = (await peekRateLimit(ctx.db, bucket, nowMs)).map((w) => ({
    name: w.name,
    window_s: w.windowS,
    limit: w.limit,
    used: w.used,
    remaining: Math.max(0, w.limit - w.used),
    resets_at: new Date((Math.floor(nowMs / (w.windowS * 1000)) + 1) * w.windowS * 1000).toISOString(),
  }));
  return { client_id: id, days, windows };
}
