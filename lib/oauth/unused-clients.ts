import { and, eq, inArray, lt, notExists, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthClients, oauthGrants } from "../db/schema";

/** How long a client that registered itself (RFC 7591) or was read from its metadata document is kept while no athlete authorizes it. */
export const UNUSED_REGISTRATION_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Removes clients that came to the service on their own (registered, or read from a metadata
 * document when an authorization named it) and that no athlete authorized within a day: anyone
 * can make them, so they must not pile up. A metadata document's client is read again if its
 * URL is used later.
 */
export async function pruneUnusedClients(db: Db, nowMs: number): Promise<void> {
  await db
    .delete(oauthClients)
    .where(
      and(
        inArray(oauthClients.registration, ["dynamic", "metadata_document"]),
        lt(oauthClients.createdAt, new Date(nowMs - UNUSED_REGISTRATION_TTL_MS)),
        notExists(db.select({ one: sql`1` }).from(oauthGrants).where(eq(oauthGrants.clientId, oauthClients.clientId))),
      ),
    );
}
