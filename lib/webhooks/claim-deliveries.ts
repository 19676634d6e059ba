import { and, eq, sql, type Placeholder, type SQL, type SQLWrapper } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, columnsOf, compiledStatement, notBefore, orNull, rowsAs, selectAs, type Db, type RawBigint, type RawValue } from "../db/client";
import { events, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { CLAIM_LEASE_S } from "./claim-lease";
import { inTransaction } from "../db/transaction";
import { recordInterrupted } from "./record-attempt";
import { claimable, deliverable, failing, isFailing, leased, MAX_IN_FLIGHT_PER_SUBSCRIPTION } from "./policy";

/** A delivery held by one worker until `lockedUntil`, with what it needs to be sent. */
export type ClaimedDelivery = {
  id: string;
  subscriptionId: string;
  /** Attempts made before this one (an attempt a lapsed claim cut short among them: record-attempt.ts `recordInterrupted`). */
  attemptCount: number;
  /**
   * Claimed as its failing subscription's one probe. A delivery claimed while the subscription
   * was healthy that fails after the streak began (it was in flight beside the first failure)
   * is logged but not counted: the streak counts the probes, one at a time (CONTRACT §7).
   */
  probe: boolean;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  event: { id: string; type: string; athleteId: string; objectId: string; objectType: string; occurredAt: Date } | null;
};

// Typed SQL: every column below comes from the schema, through these aliases.
const d = alias(webhookDeliveries, "d");
const x = alias(webhookDeliveries, "x");
const s = alias(webhookSubscriptions, "s");
const e = alias(events, "e");

/**
 * Deliveries of subscription `s` held by a worker now, whatever their status: one that failed
 * while its attempt was out (the athlete disconnected, the subscription was disabled) keeps its
 * lease until that attempt is recorded, so a failing subscription's next probe waits for it.
 */
const inFlightOfS = sql`select 1 from ${webhookDeliveries} ${x} where ${x.subscriptionId} = ${s.id} and ${x.lockedUntil} is not null and ${leased(x)}`;

type Selection = {
  limit: number | Placeholder;
  /** Only this delivery (the Inngest runner's unit of work). */
  deliveryId?: string | Placeholder;
  subscriptionId?: string;
  /**
   * Only deliveries due at least this long ago, and not claimed, recorded or handed out since
   * (the sweep leaves alone those a worker is about to take, or was just handed).
   */
  overdueS?: number;
  /** With `subscriptionId`: only its deliveries of events after this outbox position (a listing's next page). */
  afterSeq?: number;
  /**
   * A listing: only deliveries unchanged since this version (`versionOf`, ms): not claimed,
   * recorded or handed out after it. What waited as of then, and not what was handed out since.
   */
  asOf?: number;
  /**
   * For a claim: healthy subscriptions get no more than their room under the cap, and the rows
   * are locked (SKIP LOCKED keeps two workers off the same rows). A listing only reads.
   */
  claim: boolean;
};

/** What `eligible`'s CTEs keep of a claim that lapsed, read again as `claimed`'s `c.lapsed_until` and `c.claimed_at`. */
const lapseColumns = {
  lapsed_until: d.lockedUntil,
  // Computed (null without a lease): the type of updated_at, or null.
  claimed_at: sql<RawValue<typeof d.updatedAt> | null>`case when ${d.lockedUntil} is not null then ${d.updatedAt} end`,
};

/**
 * The CTEs `healthy (id)` and `heads (id)`: the deliveries the policy lets go now. A healthy
 * subscription's due deliveries, oldest events first, up to its room under
 * MAX_IN_FLIGHT_PER_SUBSCRIPTION (counting those in flight); a failing subscription's oldest
 * pending delivery, when it is due and nothing else of it is in flight (its one probe, its row
 * locked so two workers never probe it at once). Healthy ones first; the room left goes to probes.
 */
function eligible(o: Selection): SQL {
  const overdue = o.overdueS ?? 0;
  const lock = (t: SQLWrapper) => (o.claim ? sql`for update of ${t} skip locked` : sql``);
  const onlyDelivery = o.deliveryId ? sql`and ${d.id} = ${o.deliveryId}` : sql``;
  const onlySub = o.subscriptionId
    ? sql`and ${s.id} = ${o.subscriptionId}`
    : o.deliveryId
      ? sql`and ${s.id} = (select ${x.subscriptionId} from ${webhookDeliveries} ${x} where ${x.id} = ${o.deliveryId})`
      : sql``;
  // A claimable delivery that has a lease is one whose claim lapsed: its worker died (or could
  // not record) after the claim, perhaps mid-request. What the claim knew of it (when it was
  // claimed: the claim sets updated_at, renewals do not) goes to the log as an interrupted attempt.
  const lapse = selectAs(lapseColumns);
  const room = o.claim ? sql`${MAX_IN_FLIGHT_PER_SUBSCRIPTION} - (select count(*) from (${inFlightOfS}) f)::int` : sql`${o.limit}::int`;
  // A sweep passes over what was claimed, recorded or handed out within the same bound: a
  // hand-out still queued for a worker is not handed out again each time (listDueDeliveries).
  const due = overdue > 0 && !o.claim ? sql`${claimable(d, overdue)} and ${d.updatedAt} <= now() - make_interval(secs => ${overdue})` : claimable(d, overdue);
  const afterSeq = o.afterSeq === undefined ? sql`` : sql`and ${d.eventSeq} > ${o.afterSeq}`;
  const asOf = o.asOf === undefined || o.claim ? sql`` : sql` and ${versionOf(d)} <= ${o.asOf}`;
  // A claim takes the soonest due. A listing takes subscriptions in turns (each one's first,
  // then each one's second...), so one subscription's backlog does not fill it.
  const order = o.claim ? sql`h.next_attempt_at, h.event_seq` : sql`row_number() over (partition by r.id order by h.event_seq), h.next_attempt_at, h.event_seq`;
  return sql`
    healthy as (
      select h.id, h.lapsed_until, h.claimed_at from (
        select ${s.id} as id, ${room} as free from ${webhookSubscriptions} ${s}
        where ${deliverable(s)} and not ${failing(s)} ${onlySub}) r
      cross join lateral (
        select ${d.id} as id, ${d.nextAttemptAt} as next_attempt_at, ${d.eventSeq} as event_seq, ${lapse}
        from ${webhookDeliveries} ${d}
        where ${d.subscriptionId} = r.id and ${due} ${onlyDelivery} ${afterSeq}${asOf}
        order by ${d.eventSeq}
        limit greatest(r.free, 0)
        ${lock(d)}) h
      order by ${order}
      limit ${o.limit}),
    heads as (
      select h.id, h.lapsed_until, h.claimed_at from ${webhookSubscriptions} ${s}
      cross join lateral (
        select ${d.id} as id, ${d.eventSeq} as event_seq, ${due} as ok, ${lapse} from ${webhookDeliveries} ${d}
        where ${d.subscriptionId} = ${s.id} and ${d.status} = 'pending'
        order by ${d.eventSeq} limit 1) h
      where ${deliverable(s)} and ${failing(s)} ${onlySub} and h.ok ${o.deliveryId ? sql`and h.id = ${o.deliveryId}` : sql``}
        ${o.afterSeq === undefined ? sql`` : sql`and h.event_seq > ${o.afterSeq}`}
        and not exists (${inFlightOfS})
      limit greatest(${o.limit} - (select count(*) from healthy), 0)
      ${lock(s)})`;
}

/**
 * Claims up to `limit` deliveries the policy lets go now (`eligible`), for this worker: sets
 * `locked_until` (a lease of `leaseS`, which the worker renews while it attempts them:
 * claim-lease.ts) in the claiming statement, so a dead worker's claims lapse within the lease
 * and are taken again. With `deliveryId`, that delivery or nothing: the Inngest runner's claim.
 *
 * One statement, in a transaction of its own behind CLAIM_LOCK: a row changed by a worker that
 * committed meanwhile is re-checked against `claimable` before it is taken (READ COMMITTED's
 * re-evaluation of updated rows), but the room a subscription has under the cap, and whether a
 * failing subscription's probe is out, are read from the statement's snapshot. Two processes
 * claiming at once (the worker plan runs one per core over PostgreSQL) each saw none of the
 * other's claims and filled the room twice: 8 of one subscription in flight, and 28 of 200
 * starts found more than 4. Behind the lock each claim's statement begins after the last claim
 * committed, so it counts every claim made before it.
 */
export async function claimDueDeliveries(
  db: Db,
  opts: {
    limit: number;
    leaseS?: number;
    deliveryId?: string;
    /**
     * Deliveries this worker is still attempting itself (its own lease ran out while it
     * stalled): not interrupted, so not logged as such; the attempt in flight records itself.
     */
    stillHeld?: (deliveryId: string) => boolean;
  },
): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const values = { limit: opts.limit, leaseS: opts.leaseS ?? CLAIM_LEASE_S, deliveryId: opts.deliveryId };
  const claim = opts.deliveryId === undefined ? claimBatch : claimOne;
  const claimed = claimedRows(
    await inTransaction(db, async (tx) => {
      await tx.execute(CLAIM_LOCK);
      return claim(tx, values);
    }),
  );
  const lapsed = claimed.filter((c) => c.lapsed && !opts.stillHeld?.(c.delivery.id));
  if (lapsed.length === 0) return claimed.map((c) => c.delivery);
  // Each claim that lapsed goes to the log before the delivery is attempted again. If the lost
  // attempt was the delivery's last, the delivery has failed and is not attempted again.
  const recorded = await recordInterrupted(
    db,
    lapsed.map((c) => ({ deliveryId: c.delivery.id, attemptCount: c.delivery.attemptCount, claimedAt: c.lapsed!.claimedAt, lapsedAt: c.lapsed!.until })),
  );
  return claimed
    .filter((c) => recorded.get(c.delivery.id)?.status !== "failed")
    .map((c) => ({ ...c.delivery, attemptCount: recorded.get(c.delivery.id)?.attemptCount ?? c.delivery.attemptCount }));
}

/**
 * Held by each claim's transaction until it commits: claims take turns across processes, each
 * statement's snapshot taken once the claim before it committed. A claim statement takes a few
 * milliseconds, and a process claims a quarter of its slots at a time (local-runner.ts).
 */
const CLAIM_LOCK = sql`select pg_advisory_xact_lock(hashtextextended('aas:webhook-claims', 0))`;

/** The claim, in its two shapes (any due deliveries; one named delivery), each compiled once. */
const claimStatement = (one: boolean) => () => sql`
  with ${eligible({ limit: sql.placeholder("limit"), deliveryId: one ? sql.placeholder("deliveryId") : undefined, claim: true })},
  claimed as (
    update ${webhookDeliveries} ${d}
    set ${bareColumn(webhookDeliveries.lockedUntil)} = now() + make_interval(secs => ${sql.placeholder("leaseS")}),
      ${bareColumn(webhookDeliveries.updatedAt)} = now()
    from (select * from healthy union all select * from heads) l
    where ${d.id} = l.id and ${claimable(d)}
    returning ${d.id} as id, l.lapsed_until, l.claimed_at)
  ${loadClaimed}`;
const claimBatch = compiledStatement("webhook_claim", claimStatement(false));
const claimOne = compiledStatement("webhook_claim_one", claimStatement(true));

/** How soon a failing subscription's probe the claim passed by (its subscription's row was locked) is looked at again. */
export const PROBE_RELOOK_MS = 1_000;

export type ClaimOne =
  | { state: "claimed"; delivery: ClaimedDelivery }
  /** Not yet: look again at `until`; null: it waits behind its failing subscription's probe. */
  | { state: "wait"; until: Date | null }
  /** Nothing left to do: succeeded, failed, disabled, or gone. */
  | { state: "done"; status: "succeeded" | "failed" | "gone" };

/**
 * Claims one named delivery (the Inngest runner's unit of work) with the same statement as the
 * local runner's batch. When the policy does not let it go, says when to look again: when it
 * falls due or its own lease ends, else when the soonest lease of its subscription ends (the
 * cap, or a probe in flight); with none of those, the probe itself looks again in
 * PROBE_RELOOK_MS, and a delivery behind it waits for it (`until: null`) and is dispatched
 * again when the subscription recovers.
 */
export async function claimDelivery(db: Db, deliveryId: string, opts: { leaseS?: number } = {}): Promise<ClaimOne> {
  const [delivery] = await claimDueDeliveries(db, { limit: 1, deliveryId, leaseS: opts.leaseS });
  if (delivery) return { state: "claimed", delivery };
  const later = sql`greatest(${webhookDeliveries.nextAttemptAt}, coalesce(${webhookDeliveries.lockedUntil}, ${webhookDeliveries.nextAttemptAt}))`;
  const [row] = await db
    .select({
      status: webhookDeliveries.status,
      subStatus: webhookSubscriptions.status,
      consecutiveFailures: webhookSubscriptions.consecutiveFailures,
      notYet: sql<string | Date | null>`case when ${later} > now() then ${later} end`,
      soonestLease: sql<string | Date | null>`(select min(${x.lockedUntil}) from ${webhookDeliveries} ${x}
        where ${x.subscriptionId} = ${webhookDeliveries.subscriptionId} and ${x.status} = 'pending' and ${leased(x)})`,
      // An older pending delivery of its subscription: the probe, if the subscription is failing.
      behind: sql<boolean>`exists (select 1 from ${webhookDeliveries} ${x}
        where ${x.subscriptionId} = ${webhookDeliveries.subscriptionId} and ${x.status} = 'pending' and ${x.eventSeq} < ${webhookDeliveries.eventSeq})`,
      now: sql<string | Date>`now()`,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
    .where(eq(webhookDeliveries.id, deliveryId));
  if (!row) return { state: "done", status: "gone" };
  if (row.status !== "pending") return { state: "done", status: row.status };
  if (row.subStatus !== "active") return { state: "done", status: "failed" };
  const until = row.notYet ?? row.soonestLease;
  if (until) return { state: "wait", until: notBefore(until) };
  // Nothing holds it but the probe rule, or a claim that changed meanwhile: look again now.
  if (!isFailing(row.consecutiveFailures)) return { state: "wait", until: notBefore(row.now) };
  // It is the probe, and the claim passed it by: its subscription's row was locked by someone
  // else at that instant (fan-out's FOR SHARE, a record, a developer's change; the claim skips
  // locked rows), or the attempt in flight beside it was recorded between the claim and this
  // look. Its run is the only one it has: it looks again shortly, as the local runner's next pass would.
  if (!row.behind) return { state: "wait", until: new Date(new Date(row.now).getTime() + PROBE_RELOOK_MS) };
  // It waits behind the probe and its hand-out ends here. The next hand-out (the recovery's, the
  // next probe's, the sweep's) names the delivery's version (inngest/client.ts `deliveryDue`),
  // and Inngest drops an event id it has seen within a day: without a new version, the one
  // that led here would be taken for it.
  //
  // A claim of it that lapsed (its run died mid-attempt) is logged as interrupted first, from
  // what the claim left (updated_at: when it was claimed, locked_until: when its lease ended),
  // and its lease cleared: the new version overwrites that claim time, and the claim that takes
  // the delivery later would log the attempt as starting now and lasting nothing. Under the row's
  // lock, so a claim made meanwhile (a new lease) is left alone.
  const failed = await inTransaction(db, async (tx) => {
    const [held] = await tx
      .select({ attemptCount: webhookDeliveries.attemptCount, claimedAt: webhookDeliveries.updatedAt, lockedUntil: webhookDeliveries.lockedUntil, lapsed: sql<boolean>`not ${leased(webhookDeliveries)}` })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")))
      .for("update");
    if (!held) return false;
    if (held.lockedUntil && !held.lapsed) return false;
    if (held.lockedUntil) {
      const recorded = await recordInterrupted(tx, [{ deliveryId, attemptCount: held.attemptCount, claimedAt: held.claimedAt, lapsedAt: held.lockedUntil }]);
      if (recorded.get(deliveryId)?.status === "failed") return true;
    }
    await tx
      .update(webhookDeliveries)
      .set({ lockedUntil: null, updatedAt: sql`greatest(now(), ${webhookDeliveries.updatedAt} + interval '1 millisecond')` })
      .where(eq(webhookDeliveries.id, deliveryId));
    return false;
  });
  if (failed) return { state: "done", status: "failed" };
  return { state: "wait", until: null };
}

/** A delivery to hand to a worker; `version` changes whenever the row does (its updated_at); `seq`, its event's outbox position. */
export type DueDelivery = { id: string; subscriptionId: string; version: string; seq: number };

/**
 * Deliveries the policy lets go now that no worker holds (the claim's own selection, without
 * the cap or the locks): what a sweeper hands out again after a crash, an outage or a
 * redelivery, and what waited behind a failing subscription's probe once it recovers. With
 * `subscriptionId`, that subscription's, oldest events first, after `afterSeq` (one page);
 * without, subscriptions in turns. `overdueS` leaves alone those a sleeping worker is about to
 * take, and those claimed, recorded or handed out within that time. Handing out more of a
 * subscription than its cap is harmless: the claim makes the rest wait.
 *
 * With `handOut`, the rows listed are marked as handed out now: each gets a new version (its
 * updated_at moves; not a lapsed claim's, whose updated_at says when that claim was made), so
 * the hand-out's event id is new and a sweep passes over it for `overdueS`. Rows another
 * hand-out is marking at that instant are left to it (SKIP LOCKED).
 */
export async function listDueDeliveries(
  db: Db,
  opts: { limit: number; overdueS?: number; subscriptionId?: string; afterSeq?: number; asOf?: number; handOut?: boolean },
): Promise<DueDelivery[]> {
  const { handOut, ...selection } = opts;
  const listed = sql`
    select ${d.id} as id from ${webhookDeliveries} ${d}
    where ${d.id} in (select id from healthy union all select id from heads)
    order by ${d.nextAttemptAt}
    limit ${opts.limit}`;
  const rows = rowsAs(
    dueColumns,
    await db.execute(
      handOut
        ? sql`
      with ${eligible({ ...selection, claim: false })},
      picked as materialized (${listed} for update of ${d} skip locked)
      update ${webhookDeliveries} ${d}
      set ${bareColumn(webhookDeliveries.updatedAt)} =
        case when ${d.lockedUntil} is null then greatest(now(), ${d.updatedAt} + interval '1 millisecond') else ${d.updatedAt} end
      from picked
      where ${d.id} = picked.id and ${claimable(d)}
      returning ${selectAs(dueColumns)}`
        : sql`
      with ${eligible({ ...selection, claim: false })}
      select ${selectAs(dueColumns)} from ${webhookDeliveries} ${d}
      where ${d.id} in (${listed})`,
    ),
  );
  return rows
    .map((r) => ({ id: r.id, subscriptionId: r.subscription_id, version: String(r.version), seq: Number(r.seq) }))
    .sort((a, b) => a.seq - b.seq);
}

/** A row's version (a delivery's `DueDelivery.version`, a subscription's for `waitingAfterSuccess`): its updated_at in whole milliseconds. */
function versionOf(t: { updatedAt: SQLWrapper }) {
  return sql<RawBigint>`floor(extract(epoch from ${t.updatedAt}) * 1000)::bigint`;
}

const dueColumns = {
  id: d.id,
  subscription_id: d.subscriptionId,
  seq: d.eventSeq,
  // Computed: updated_at in whole milliseconds.
  version: versionOf(d),
};

/**
 * After a delivery succeeded (or a run finds it succeeded already): whether deliveries of its
 * subscription wait for a hand-out that nothing else will give them, and as of which version
 * (the subscription's, ms) to hand them out (`listDueDeliveries`'s `asOf`). While a
 * subscription failed, the deliveries behind its probe ended their runs waiting; the success
 * that ended the streak set the subscription's updated_at, and they were last changed before
 * it. So: the subscription is active and healthy, and has due deliveries no worker holds,
 * unchanged since the subscription last changed. The answer comes from the data, not from the
 * attempt that recovered the subscription: a run of that attempt's step that finds its delivery
 * succeeded (the first run's result never reached Inngest) answers the same. A healthy
 * subscription's row is not written by its deliveries' successes, so deliveries handed out
 * since its last change (their runs queued) do not count; and a hand-out marks what it hands
 * out, so it is not counted again.
 */
export async function waitingAfterSuccess(db: Db, deliveryId: string): Promise<{ subscriptionId: string; asOf: number } | null> {
  const [row] = rowsAs(
    waitingColumns,
    await db.execute(sql`
      select ${selectAs(waitingColumns)} from ${webhookDeliveries} ${x}
      join ${webhookSubscriptions} ${s} on ${s.id} = ${x.subscriptionId}
      where ${x.id} = ${deliveryId} and ${deliverable(s)} and not ${failing(s)}
        and exists (select 1 from ${webhookDeliveries} ${d}
          where ${d.subscriptionId} = ${s.id} and ${claimable(d)} and ${versionOf(d)} <= ${versionOf(s)})`),
  );
  return row ? { subscriptionId: row.subscription_id, asOf: Number(row.as_of) } : null;
}

const waitingColumns = { subscription_id: s.id, as_of: versionOf(s) };

/** What `loadClaimed` reads: the delivery, its subscription, its event (a LEFT JOIN: null when the event row is gone), and its lapsed claim. */
const claimedColumns = {
  id: d.id,
  subscription_id: d.subscriptionId,
  attempt_count: d.attemptCount,
  // Computed: whether the subscription is failing (policy.ts).
  probe: sql<boolean>`${failing(s)}`,
  url: s.url,
  secret_sealed: s.secretSealed,
  previous_secret_sealed: s.previousSecretSealed,
  previous_secret_expires_at: s.previousSecretExpiresAt,
  ...orNull({
    event_id: e.id,
    type: e.type,
    athlete_id: e.athleteId,
    object_id: e.objectId,
    object_type: e.objectType,
    occurred_at: e.occurredAt,
  }),
  ...columnsOf("c", lapseColumns),
};

/** Follows a `claimed (id)` CTE: what an attempt needs, oldest event first. */
const loadClaimed = sql`
  select ${selectAs(claimedColumns)}
  from claimed c
  join ${webhookDeliveries} ${d} on ${d.id} = c.id
  join ${webhookSubscriptions} ${s} on ${s.id} = ${d.subscriptionId}
  left join ${events} ${e} on ${e.id} = ${d.eventId}
  order by ${d.eventSeq}`;

/** A claimed row, and when the claim before this one (which lapsed) was made and ran out, if it did. */
type Claimed = { delivery: ClaimedDelivery; lapsed: { claimedAt: Date; until: Date } | null };

function claimedRows(result: unknown): Claimed[] {
  return rowsAs(claimedColumns, result).map((r) => ({
    lapsed: r.lapsed_until === null ? null : { until: new Date(r.lapsed_until), claimedAt: new Date(r.claimed_at ?? r.lapsed_until) },
    delivery: {
      id: r.id,
      subscriptionId: r.subscription_id,
      attemptCount: Number(r.attempt_count),
      probe: r.probe,
      url: r.url,
      secretSealed: r.secret_sealed,
      previousSecretSealed: r.previous_secret_sealed,
      previousSecretExpiresAt: r.previous_secret_expires_at ? new Date(r.previous_secret_expires_at) : null,
      event:
        r.event_id === null
          ? null // its event row is gone: the attempt is recorded as not sent
          : { id: r.event_id, type: r.type!, athleteId: r.athlete_id!, objectId: r.object_id!, objectType: r.object_type!, occurredAt: new Date(r.occurred_at!) },
    },
  }));
}
