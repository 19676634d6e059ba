import "server-only";
import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthClients } from "../db/schema";
import { isStorableText } from "../http/validation";
import { log } from "../log";

export type OAuthClient = typeof oauthClients.$inferSelect;

/**
 * Registered apps, kept in memory so that authenticating a client at /oauth/token costs no
 * query (the token endpoint's cost is then signing the JWT; bench/README.md has the figures).
 *
 * What keeps it correct:
 * - A change to an app (secret rotated, app deleted or edited) calls `announceClientChange`
 *   inside its write: this process stops using its copy at once, synchronously, and reads the
 *   database for that app until the change's own notification comes back (so a request racing
 *   the uncommitted write cannot put the old row back); the notification, sent by PostgreSQL
 *   on commit (`pg_notify` on `aas_oauth_clients`), drops the copy in every other process and
 *   instance that listens.
 * - Copies are taken only while this process listens, and every (re)start of the listener
 *   empties the cache: notifications missed while its connection was down cannot leave a copy.
 * - A copy is used for at most `CLIENT_CACHE_TTL_MS`: the bound on staleness in another
 *   process if its listening connection is lost without it noticing. Within one process the
 *   next request after a change always sees it.
 */
export const CLIENT_CACHE_TTL_MS = 5_000;
export const CLIENT_CHANNEL = "aas_oauth_clients";
const MAX_ENTRIES = 10_000;

type Entry = { client: OAuthClient; at: number };
type State = {
  /** Tags this process's own notifications: `<origin>:<seq>:<client_id>`. */
  origin: string;
  seq: number;
  entries: Map<string, Entry>;
  /** Changes announced here whose notification has not come back yet: client id → seqs. */
  pending: Map<string, Map<number, number>>;
  /** Bumped on every invalidation: a read that started before one must not fill the cache. */
  generation: number;
  /** The database listened on, and whether the listener is up. */
  db?: Db;
  listening: boolean;
  listen?: Promise<void>;
};

// On globalThis: Next.js may bundle this module into several route chunks, and they must
// share one cache (and one invalidation).
const g = globalThis as unknown as { __aasClientCache?: State };
const state = (): State =>
  (g.__aasClientCache ??= {
    origin: randomBytes(6).toString("base64url"),
    seq: 0,
    entries: new Map(),
    pending: new Map(),
    generation: 0,
    listening: false,
  });

function forget(s: State, clientId: string): void {
  s.entries.delete(clientId);
  s.generation++;
}

function onNotification(s: State, payload: string): void {
  const [origin, seq, ...rest] = payload.split(":");
  const clientId = rest.join(":");
  if (!clientId) {
    s.entries.clear();
    s.generation++;
    return;
  }
  forget(s, clientId);
  if (origin === s.origin) {
    const mine = s.pending.get(clientId);
    mine?.delete(Number(seq));
    if (mine && mine.size === 0) s.pending.delete(clientId);
  }
}

type Listenable = { listen: (channel: string, fn: (payload: string) => void, onlisten?: () => void) => Promise<unknown> };

/** Starts listening on `db` once; until it listens, nothing is cached. */
function ensureListening(s: State, db: Db): void {
  if (s.db === db) return;
  // Another database (tests swap them): nothing from the old one may be used.
  s.db = db;
  s.listening = false;
  s.entries.clear();
  s.generation++;
  const client = (db as unknown as { $client?: Partial<Listenable> }).$client;
  if (!client || typeof client.listen !== "function") return;
  const started = () => {
    if (s.db !== db) return;
    // (Re)connected: what was announced while it was down is unknown, so start empty.
    s.entries.clear();
    s.generation++;
    s.listening = true;
  };
  const onPayload = (payload: string) => onNotification(s, payload);
  // postgres.js calls `started` again after each reconnect; PGlite (one process, it hears its
  // own commits) takes no such callback: its third argument is a transaction.
  const pglite = "waitReady" in client;
  s.listen = (pglite ? (client as Listenable).listen(CLIENT_CHANNEL, onPayload) : (client as Listenable).listen(CLIENT_CHANNEL, onPayload, started))
    .then(() => started())
    .catch((err: unknown) => {
      log.warn("client cache: cannot listen for app changes; apps are read from the database", { error: String(err) });
      if (s.db === db) s.db = undefined;
    });
}

function dirty(s: State, clientId: string, now: number): boolean {
  const mine = s.pending.get(clientId);
  if (!mine) return false;
  for (const [seq, until] of mine) if (until <= now) mine.delete(seq);
  if (mine.size === 0) s.pending.delete(clientId);
  return mine.size > 0;
}

async function readClient(db: Db, clientId: string): Promise<OAuthClient | undefined> {
  const [c] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId)).limit(1);
  return c;
}

/** The app `clientId`, from memory when a copy is current, else from the database. */
export async function findClientCached(db: Db, clientId: string): Promise<OAuthClient | undefined> {
  // No registered id holds a NUL or a lone surrogate, and PostgreSQL would refuse the first as
  // a query parameter: such an id is an unknown client, whichever endpoint sent it.
  if (!isStorableText(clientId)) return undefined;
  const s = state();
  ensureListening(s, db);
  const now = Date.now();
  const hit = s.entries.get(clientId);
  if (hit && s.listening && now - hit.at < CLIENT_CACHE_TTL_MS && !dirty(s, clientId, now)) return hit.client;
  const generation = s.generation;
  const client = await readClient(db, clientId);
  // Unknown ids are not kept: guesses must not fill memory, and a new app needs no invalidation.
  if (client && s.listening && s.db === db && s.generation === generation && !dirty(s, clientId, Date.now())) {
    if (s.entries.size >= MAX_ENTRIES) s.entries.clear();
    s.entries.set(clientId, { client, at: now });
  }
  return client;
}

/**
 * Call inside the transaction that changes or deletes app `clientId`, before it commits: this
 * process stops trusting its copy now, and every listener drops its copy when the change
 * commits. If the transaction rolls back, the app is simply read from the database for a while.
 */
export async function announceClientChange(db: Db, clientId: string): Promise<void> {
  const s = state();
  const seq = ++s.seq;
  let mine = s.pending.get(clientId);
  if (!mine) s.pending.set(clientId, (mine = new Map()));
  mine.set(seq, Date.now() + CLIENT_CACHE_TTL_MS);
  forget(s, clientId);
  await db.execute(sql`select pg_notify(${CLIENT_CHANNEL}, ${`${s.origin}:${seq}:${clientId}`})`);
}

/** Tests: what the cache holds. */
export function clientCacheStateForTests() {
  const s = state();
  return { listening: s.listening, cached: [...s.entries.keys()], pending: [...s.pending.keys()] };
}
