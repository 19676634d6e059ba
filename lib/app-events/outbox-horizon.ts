import { sql } from "drizzle-orm";

/**
 * The outbox position every event before which has committed (or never will): the oldest
 * transaction still running when the statement's snapshot was taken, of this database's. Any
 * event committed later comes after it in (xact, seq), so a list that stops here never hands out
 * a cursor past an event still being written (lib/app-events/list-app-events.ts).
 *
 * Transaction ids are the server's, shared by its databases, and so is the snapshot's list of
 * running ones: `pg_snapshot_xmin` alone let another database's write (an idle session left in
 * a transaction, a long migration next door) hold this database's list back for as long as it
 * ran. A running transaction that pg_stat_activity shows in another database is left out; any
 * other (this database's, or one that ended between the snapshot and this look, or one the view
 * does not show) still holds the list, so nothing of this database's is ever passed over.
 */
export const outboxHorizon = sql`coalesce(
  (select min(x) from pg_snapshot_xip(pg_current_snapshot()) as x
    where not exists (
      select 1 from pg_stat_activity as a
      where a.datname <> current_database() and a.backend_xid::text = (x::text::numeric % 4294967296)::text)),
  pg_snapshot_xmax(pg_current_snapshot()))`;
