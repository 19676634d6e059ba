import { and, count, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthClients, oauthGrants } from "../db/schema";
import { ApiError } from "../http/errors";
import type { DeveloperApp } from "./schemas";

export type ClientRow = typeof oauthClients.$inferSelect;

/**
 * The app `clientId` if `userId` owns it. Anyone else gets the same 404 as for an app that
 * does not exist, so client ids cannot be probed through the console.
 */
export async function loadOwnedApp(db: Db, userId: string, clientId: string, opts: { forUpdate?: boolean } = {}): Promise<ClientRow> {
  const q = db
    .select()
    .from(oauthClients)
    .where(and(eq(oauthClients.clientId, clientId), eq(oauthClients.ownerId, userId)))
    .limit(1);
  const [row] = opts.forUpdate ? await q.for("update") : await q;
  if (!row) throw new ApiError("not_found", `You have no app with client_id ${clientId}.`);
  return row;
}

export async function connectedAthletes(db: Db, clientId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.clientId, clientId), isNull(oauthGrants.revokedAt)));
  return Number(row?.n ?? 0);
}

/** The wire shape: never the secret hash. */
export function toDeveloperApp(row: ClientRow, connected: number): DeveloperApp {
  return {
    client_id: row.clientId,
    name: row.name,
    kind: row.kind,
    redirect_uris: row.redirectUris,
    logo_url: row.logoUrl,
    homepage_url: row.homepageUrl,
    connected_athletes: connected,
    created_at: row.createdAt.toISOString(),
  };
}
