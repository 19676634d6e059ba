// The seeded world: athletes with subscriptions and their activities, written with one
// INSERT … SELECT … FROM generate_series per table, and bench-only personal access tokens.
import { isDeepStrictEqual } from "node:util";
import { generateToken } from "../../lib/tokens/format";
import { randomBase62, sha256Hex } from "../../lib/crypto/random";
import { unsealWith } from "../../lib/crypto/aead";
import { SPORT_TYPES } from "../../lib/activities/schemas";
import type { Scope } from "../../lib/auth/scopes";
import { connect, ensureDatabase, migrateDatabase, readSeedMark, writeSeedMark, type Sql } from "./database";

export type WorldSpec = {
  /** Athletes with `activitiesEach` activities each. */
  athletes: number;
  activitiesEach: number;
  /** One more athlete with this many activities, for deep pagination. */
  bigAthleteActivities: number;
  /** Bumped when the shape of the seeded rows changes, so old bench databases are rebuilt. */
  version: number;
};

export type World = {
  spec: WorldSpec;
  /** Reused from an earlier run rather than seeded now. */
  reused: boolean;
  seedSeconds: number;
  counts: { users: number; activities: number };
  /** An athlete with `activitiesEach` activities, and the athlete with `bigAthleteActivities`. */
  typicalAthleteId: string;
  bigAthleteId: string;
};

const SEED_KEY = "activity-world";

/** `ath_` / `act_` plus 22 characters, the length of real ids, so index entries are real-sized. */
export const athleteId = (n: number) => `ath_${String(n).padStart(22, "0")}`;
const BIG_ATHLETE = athleteId(0);

/**
 * Opens the bench database with the world in it, seeding it when it is missing or was seeded
 * with another spec. Each athlete's activities are interleaved with everyone else's, as rows
 * arriving over time would be, so a page of one athlete's list touches many heap pages.
 */
export async function prepareWorld(url: string, dbName: string, spec: WorldSpec, log: (s: string) => void): Promise<World> {
  await ensureDatabase(dbName, { fresh: false });
  await migrateDatabase(url);
  const started = performance.now();
  const expected = spec.athletes * spec.activitiesEach + spec.bigAthleteActivities;
  const before = await withSql(url, async (sql) => ({ mark: await readSeedMark(sql, SEED_KEY), counts: await countRows(sql) }));
  const reused =
    // jsonb reorders keys: compare structurally.
    isDeepStrictEqual(before.mark, spec) &&
    before.counts.activities === expected &&
    before.counts.users === spec.athletes + 1;
  if (reused) {
    log(`reusing database ${dbName}: ${before.counts.users.toLocaleString("en")} athletes, ${before.counts.activities.toLocaleString("en")} activities`);
  } else {
    log(
      `seeding database ${dbName}: ${spec.athletes.toLocaleString("en")} athletes × ${spec.activitiesEach} activities` +
        ` + 1 athlete × ${spec.bigAthleteActivities.toLocaleString("en")}…`,
    );
    await ensureDatabase(dbName, { fresh: true });
    await migrateDatabase(url);
    await withSql(url, async (sql) => {
      await seed(sql, spec);
      await writeSeedMark(sql, SEED_KEY, spec);
    });
  }
  const counts = await withSql(url, countRows);
  return {
    spec,
    reused,
    seedSeconds: (performance.now() - started) / 1000,
    counts,
    typicalAthleteId: athleteId(1),
    bigAthleteId: BIG_ATHLETE,
  };
}

async function withSql<T>(url: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = connect(url);
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

async function countRows(sql: Sql) {
  const [row] = await sql<{ users: string; activities: string }[]>`
    select (select count(*) from users) as users, (select count(*) from activities) as activities`;
  return { users: Number(row!.users), activities: Number(row!.activities) };
}

async function seed(sql: Sql, spec: WorldSpec): Promise<void> {
  const { athletes, activitiesEach, bigAthleteActivities } = spec;
  // A bench database: losing it in a crash costs a re-seed, nothing more.
  await sql`set synchronous_commit = off`;
  await sql`set maintenance_work_mem = '256MB'`;
  await sql`
    insert into users (id, email, name, password_hash)
    select 'ath_' || lpad(g::text, 22, '0'), 'bench' || g || '@example.com', 'Bench Athlete ' || g, 'bench-no-sign-in'
    from generate_series(0, ${athletes}) as g`;
  await sql`
    insert into athlete_profiles (user_id, timezone, has_subscription)
    select 'ath_' || lpad(g::text, 22, '0'), 'Europe/Berlin', true
    from generate_series(0, ${athletes}) as g`;

  // Rows arrive in time order across all athletes. Every `stride`-th row (while they last)
  // belongs to the big athlete as its i-th activity; any other row is regular row i, the
  // (i div athletes)-th activity of athlete (i mod athletes) + 1.
  const regular = athletes * activitiesEach;
  const stride = Math.floor(regular / bigAthleteActivities) + 1;
  const total = regular + bigAthleteActivities;
  await sql`
    insert into activities (id, athlete_id, name, sport_type, start_local, elapsed_time_s, moving_time_s,
      distance_m, elevation_gain_m, average_speed_mps, max_speed_mps, average_heart_rate_hz,
      max_heart_rate_hz, average_power_w, energy_j, source)
    select 'act_' || lpad(g::text, 22, '0'),
           case when big then ${BIG_ATHLETE} else 'ath_' || lpad((i % ${athletes} + 1)::text, 22, '0') end,
           'Bench activity ' || g,
           (${sql.array(SPORT_TYPES as unknown as string[])}::text[])[1 + g % ${SPORT_TYPES.length}],
           case when big then timestamp '2020-01-01 06:00' + i * interval '3 hours'
                else timestamp '2025-01-01 06:00' + (i / ${athletes}) * interval '1 day' + (i % 600) * interval '1 minute' end,
           1800 + g % 5400, 1700 + g % 5000, 5000 + (g % 20000)::float8, (g % 900)::float8, 2.5 + (g % 50) / 10.0,
           5.0 + (g % 80) / 10.0, 2.2 + (g % 10) / 10.0, 2.8 + (g % 10) / 10.0, 150 + (g % 200)::float8,
           1.0e6 + (g % 100000)::float8, 'upload'
    from (
      select g, big, case when big then g / ${stride} else g - least(g / ${stride}, ${bigAthleteActivities}) end as i
      from (
        select g, (g % ${stride} = ${stride - 1} and g / ${stride} < ${bigAthleteActivities}) as big
        from generate_series(0::bigint, ${total - 1}::bigint) as g
      ) numbered
    ) s`;
  await sql`vacuum analyze users`;
  await sql`vacuum analyze athlete_profiles`;
  await sql`vacuum analyze activities`;
}

export type BenchToken = { token: string; userId: string };

/** A fresh PAT for `userId`, replacing earlier bench tokens of that athlete. */
export async function createBenchToken(url: string, userId: string, scopes: Scope[]): Promise<BenchToken> {
  const token = generateToken("pat");
  await withSql(url, async (sql) => {
    await sql`delete from personal_access_tokens where user_id = ${userId} and name = 'bench'`;
    await sql`
      insert into personal_access_tokens (id, user_id, name, token_hash, last_four, scopes)
      values (${`pat_${randomBase62(22)}`}, ${userId}, 'bench', ${sha256Hex(token)}, ${token.slice(-4)}, ${scopes})`;
  });
  return { token, userId };
}

/** Rate-limit counters from earlier runs would otherwise carry over between runs. */
export async function resetRateLimits(url: string): Promise<void> {
  await withSql(url, (sql) => sql`truncate rate_limit_counters`);
}

export type BenchApp = { clientId: string; secret: string };

/**
 * A confidential app owned by `ownerId`, with a fresh client secret (stored as the service
 * stores it, SHA-256). Replaces the bench app of an earlier run, and with it its grants.
 */
export async function createBenchApp(url: string, ownerId: string, clientId = "bench-app"): Promise<BenchApp> {
  const secret = generateToken("clientSecret");
  await withSql(url, async (sql) => {
    await sql`delete from oauth_clients where client_id = ${clientId}`;
    await sql`
      insert into oauth_clients (client_id, owner_id, name, kind, secret_hash, redirect_uris)
      values (${clientId}, ${ownerId}, 'Bench App', 'confidential', ${sha256Hex(secret)}, ${["http://127.0.0.1/callback"]})`;
  });
  return { clientId, secret };
}

/**
 * What an authorization-code exchange leaves behind: `userId`'s grant of `scopes` to the app
 * and a token family under it, which the access tokens of that exchange name (`gid`, `fam`).
 */
export async function createBenchGrant(url: string, clientId: string, userId: string, scopes: Scope[]): Promise<{ grantId: string; familyId: string }> {
  const grantId = `grt_${randomBase62(22)}`;
  const familyId = `fam_${randomBase62(22)}`;
  await withSql(url, async (sql) => {
    await sql`update oauth_grants set revoked_at = now() where client_id = ${clientId} and user_id = ${userId} and revoked_at is null`;
    await sql`insert into oauth_grants (id, client_id, user_id, scopes) values (${grantId}, ${clientId}, ${userId}, ${scopes})`;
    await sql`insert into oauth_token_families (id, grant_id, scopes) values (${familyId}, ${grantId}, ${scopes})`;
  });
  return { grantId, familyId };
}

/**
 * Drops the signing keys, so the service, started next with the bench's SECRETS_KEY, makes and
 * seals a new one (a key sealed in an earlier run, under another SECRETS_KEY, could not be read).
 */
export async function resetSigningKeys(url: string): Promise<void> {
  await withSql(url, (sql) => sql`delete from signing_keys`);
}

/**
 * The service's current signing key (the oldest unretired one, as lib/oauth/keys.ts picks),
 * unsealed with the SECRETS_KEY the bench gave the service.
 */
export async function readSigningKey(url: string, secretsKey: string): Promise<{ kid: string; privateJwk: Record<string, unknown> } | undefined> {
  return withSql(url, async (sql) => {
    const [row] = await sql<{ kid: string; private_jwk: { sealed: string } }[]>`
      select kid, private_jwk from signing_keys where retired_at is null order by created_at limit 1`;
    return row ? { kid: row.kid, privateJwk: JSON.parse(unsealWith(secretsKey, row.private_jwk.sealed)) as Record<string, unknown> } : undefined;
  });
}
