import "server-only";
import { count, eq } from "drizzle-orm";
import type { Db } from "./client";
import { inTransaction } from "./transaction";
import { activities, athleteProfiles, metrics, oauthClients, teamMemberships, teams, users } from "./schema";
import { hashPassword } from "../people/people";
import { newId } from "../ids";
import { sha256Hex } from "../crypto/random";
import { localDateTimeIn } from "../time/local";
import { SPORT_TYPES } from "../activities/schemas";

export const DEMO_PASSWORD = "demo-password";
/** Demo Training Log (CONTRACT §8): a registered app's id always ends in a random suffix, so only the seed writes this one. */
export const DEMO_CONFIDENTIAL_CLIENT_ID = "demo-training-log";
export const DEMO_CONFIDENTIAL_SECRET = "aas_cs_DemoTrainingLogSecret00000000001v3hLV";

type Sport = (typeof SPORT_TYPES)[number];

/** Deterministic PRNG (mulberry32), so every seeded world looks the same. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

/** The instant (ms) of local time `local` (`YYYY-MM-DD HH:MM:SS`) in `tz`: the zone's offset then, taken at the local time read as UTC. */
function instantOfLocal(local: string, tz: string): number {
  const asUtc = Date.parse(`${local.replace(" ", "T")}Z`);
  const offset = Date.parse(`${localDateTimeIn(tz, new Date(asUtc))}Z`) - asUtc;
  return asUtc - offset;
}

/** One plausible activity: paces, heart rates and power within what real athletes record. */
export function plausibleActivity(r: () => number, sport: Sport, massKg: number) {
  const between = (lo: number, hi: number) => lo + (hi - lo) * r();
  let distanceM: number | null = null;
  let speed: number | null = null;
  let elevation: number | null = null;
  let power: number | null = null;
  let movingS: number;
  let hrAvgBpm = between(120, 160);
  let name: string;
  switch (sport) {
    case "run":
    case "trail_run": {
      const trail = sport === "trail_run";
      distanceM = round(between(trail ? 8000 : 5000, trail ? 24_000 : 21_100), 0);
      const paceSPerKm = between(trail ? 330 : 270, trail ? 450 : 370);
      movingS = Math.round((distanceM / 1000) * paceSPerKm);
      elevation = round(between(trail ? 300 : 10, trail ? 1400 : 140));
      hrAvgBpm = between(138, 165);
      name = trail ? "Trail run" : distanceM > 15_000 ? "Long run" : r() < 0.3 ? "Tempo run" : "Easy run";
      break;
    }
    case "ride":
    case "virtual_ride": {
      distanceM = round(between(20_000, 90_000), 0);
      const kmh = between(24, 33);
      movingS = Math.round(distanceM / (kmh / 3.6));
      elevation = sport === "ride" ? round(between(100, 1200)) : round(between(0, 500));
      power = round(between(150, 250), 0);
      hrAvgBpm = between(125, 150);
      name = sport === "ride" ? "Road ride" : "Indoor ride";
      break;
    }
    case "swim": {
      distanceM = round(between(1500, 3500), 0);
      movingS = Math.round((distanceM / 100) * between(95, 130));
      hrAvgBpm = between(120, 145);
      name = "Pool swim";
      break;
    }
    case "walk":
    case "hike": {
      distanceM = round(between(3000, sport === "hike" ? 16_000 : 7000), 0);
      movingS = Math.round((distanceM / 1000) * between(600, 800));
      elevation = round(between(20, sport === "hike" ? 900 : 80));
      hrAvgBpm = between(95, 125);
      name = sport === "hike" ? "Hike" : "Walk";
      break;
    }
    default: {
      movingS = Math.round(between(1800, 3600));
      hrAvgBpm = between(95, 125);
      name = sport === "yoga" ? "Yoga" : "Strength session";
    }
  }
  if (distanceM) speed = round(distanceM / movingS, 3);
  const elapsedS = Math.round(movingS * between(1.0, 1.12));
  // ≈ 1 kcal per kg per km running; scaled by heart-rate effort for the rest.
  const kcal = distanceM && sport.includes("run") ? massKg * (distanceM / 1000) : (movingS / 3600) * (hrAvgBpm * 4.5);
  return {
    name,
    sportType: sport,
    elapsedTimeS: elapsedS,
    movingTimeS: movingS,
    distanceM,
    elevationGainM: elevation,
    averageSpeedMps: speed,
    maxSpeedMps: speed ? round(speed * between(1.25, 1.6), 3) : null,
    averageHeartRateHz: round(hrAvgBpm / 60, 3),
    maxHeartRateHz: round(Math.min(hrAvgBpm + between(15, 30), 195) / 60, 3),
    averagePowerW: power,
    energyJ: round(kcal * 4184, 0),
  };
}

type DemoPerson = {
  email: string;
  name: string;
  timezone: string;
  hasSubscription: boolean;
  trialDays: number | null;
  usesMetricUnits: boolean;
  integrations: string[];
  activities: number;
  sports: Sport[];
  massKg: number;
  metrics: boolean;
};

const PEOPLE: DemoPerson[] = [
  { email: "ava@example.com", name: "Ava Lind", timezone: "Europe/Oslo", hasSubscription: true, trialDays: null, usesMetricUnits: true, integrations: ["garmin", "wahoo"], activities: 42, sports: ["run", "run", "run", "trail_run", "ride", "swim", "strength", "yoga"], massKg: 58, metrics: true },
  { email: "ben@example.com", name: "Ben Okafor", timezone: "Europe/London", hasSubscription: false, trialDays: -10, usesMetricUnits: true, integrations: [], activities: 8, sports: ["ride", "ride", "run"], massKg: 78, metrics: false },
  { email: "cora@example.com", name: "Cora Haines", timezone: "Europe/Oslo", hasSubscription: true, trialDays: null, usesMetricUnits: true, integrations: [], activities: 10, sports: ["run", "hike"], massKg: 64, metrics: false },
  { email: "dan@example.com", name: "Dan Rivera", timezone: "America/New_York", hasSubscription: false, trialDays: 14, usesMetricUnits: false, integrations: ["strava-import"], activities: 14, sports: ["run", "run", "walk", "ride"], massKg: 72, metrics: true },
  { email: "eve@example.com", name: "Eve Tanaka", timezone: "Asia/Tokyo", hasSubscription: true, trialDays: null, usesMetricUnits: true, integrations: ["polar"], activities: 12, sports: ["swim", "run", "yoga"], massKg: 55, metrics: false },
  { email: "dev@example.com", name: "Dev Patel", timezone: "UTC", hasSubscription: true, trialDays: null, usesMetricUnits: true, integrations: [], activities: 0, sports: ["run"], massKg: 70, metrics: false },
];

export class SeedRefused extends Error {}

/**
 * The demo confidential app's `{BASE_URL}/demo/callback` (CONTRACT §8) under the base URL the
 * service runs at now: started again on another port or address, the demo world kept the
 * first one, and "Start the demo" was refused as an unregistered redirect. The seeded callback
 * (any `…/demo/callback`) is replaced where it stands; the app's other URIs are left as they are.
 */
async function demoAppFollowsBaseUrl(db: Db, baseUrl: string): Promise<void> {
  const [app] = await db.select({ redirectUris: oauthClients.redirectUris }).from(oauthClients).where(eq(oauthClients.clientId, DEMO_CONFIDENTIAL_CLIENT_ID));
  if (!app) return;
  const callback = `${baseUrl}/demo/callback`;
  const isDemoCallback = (uri: string) => URL.parse(uri)?.pathname === "/demo/callback";
  if (app.redirectUris.includes(callback) || !app.redirectUris.some(isDemoCallback)) return;
  const redirectUris = app.redirectUris.map((uri) => (isDemoCallback(uri) ? callback : uri)).filter((uri, i, all) => all.indexOf(uri) === i);
  await db.update(oauthClients).set({ redirectUris, homepageUrl: callback }).where(eq(oauthClients.clientId, DEMO_CONFIDENTIAL_CLIENT_ID));
}

async function demoWorldPresent(db: Db): Promise<boolean> {
  const [app] = await db.select({ id: oauthClients.clientId }).from(oauthClients).where(eq(oauthClients.clientId, DEMO_CONFIDENTIAL_CLIENT_ID));
  return app !== undefined;
}

/**
 * What start-up does with the demo world: seeds it when `SEED_DEMO` asks, and either way keeps
 * a demo world that is there reachable at this base URL. `npm run db:seed` seeds at its own
 * `BASE_URL` (localhost:3000 unless told), and a PostgreSQL service starts with `SEED_DEMO`
 * false: its "Start the demo" was refused as an unregistered redirect on any other address.
 */
export async function demoWorldAtStart(db: Db, opts: { seed: boolean; baseUrl: string }): Promise<"seeded" | "present" | "absent"> {
  if (opts.seed) return seedDemoWorld(db, opts);
  if (!(await demoWorldPresent(db))) return "absent";
  await demoAppFollowsBaseUrl(db, opts.baseUrl);
  return "present";
}

/**
 * CONTRACT §8's demo world. Refuses a database that already holds other people; does nothing
 * when the demo world is already there. It is there when its confidential app is: the seed
 * writes every demo person and both apps in one transaction, and no registered app can take
 * that `client_id`. A person who signed up as `ava@example.com` is not the demo world.
 */
export async function seedDemoWorld(db: Db, opts: { baseUrl: string; now?: Date }): Promise<"seeded" | "present"> {
  const now = opts.now ?? new Date();
  const [{ n }] = (await db.select({ n: count() }).from(users)) as [{ n: number }];
  if (Number(n) > 0) {
    if (await demoWorldPresent(db)) {
      await demoAppFollowsBaseUrl(db, opts.baseUrl);
      return "present";
    }
    throw new SeedRefused("The database already holds people; the demo world is seeded only into an empty database.");
  }
  const passwordHash = await hashPassword(DEMO_PASSWORD);
  const r = rng(20261121);
  await inTransaction(db, async (tx) => {
    const ids: Record<string, string> = {};
    for (const p of PEOPLE) {
      const id = newId("ath");
      ids[p.email] = id;
      await tx.insert(users).values({ id, email: p.email, name: p.name, passwordHash });
      await tx.insert(athleteProfiles).values({
        userId: id,
        timezone: p.timezone,
        hasSubscription: p.hasSubscription,
        trialEndsAt: p.trialDays === null ? null : new Date(now.getTime() + p.trialDays * 86_400_000),
        usesMetricUnits: p.usesMetricUnits,
        connectedIntegrations: p.integrations,
      });
      const rows = [];
      for (let i = 0; i < p.activities; i++) {
        // Spread over the last 60 days, mornings or evenings in the athlete's own zone.
        const daysAgo = Math.floor((i / Math.max(1, p.activities)) * 58) + 1;
        const hour = r() < 0.6 ? 6 + Math.floor(r() * 2) : 17 + Math.floor(r() * 2);
        const day = localDateTimeIn(p.timezone, new Date(now.getTime() - daysAgo * 86_400_000)).slice(0, 10);
        const startLocal = `${day} ${String(hour).padStart(2, "0")}:${String(Math.floor(r() * 60)).padStart(2, "0")}:00`;
        const sport = p.sports[Math.floor(r() * p.sports.length)]!;
        const source = p.integrations.length && r() < 0.7 ? p.integrations[0]! : "manual";
        const activity = plausibleActivity(r, sport, p.massKg);
        // Recorded a quarter of an hour after it ended (every start is a day or more ago).
        const created = new Date(instantOfLocal(startLocal, p.timezone) + (activity.elapsedTimeS + 900) * 1000);
        rows.push({ id: newId("act"), athleteId: id, startLocal, source, createdAt: created, updatedAt: created, ...activity });
      }
      if (rows.length) await tx.insert(activities).values(rows);
      if (p.metrics) {
        const m = [];
        for (let d = 1; d <= 60; d += p.email.startsWith("ava") ? 1 : 3) {
          const day = localDateTimeIn(p.timezone, new Date(now.getTime() - d * 86_400_000)).slice(0, 10);
          const at = `${day} 07:0${d % 10}:00`;
          m.push(
            { id: newId("met"), athleteId: id, type: "body_mass_kg", value: round(p.massKg + (r() - 0.5) * 1.2, 1), measuredLocal: at },
            { id: newId("met"), athleteId: id, type: "resting_heart_rate_hz", value: round((46 + r() * 8) / 60, 3), measuredLocal: at },
            { id: newId("met"), athleteId: id, type: "heart_rate_variability_s", value: round(0.055 + r() * 0.03, 4), measuredLocal: at },
            { id: newId("met"), athleteId: id, type: "sleep_duration_s", value: Math.round((6.5 + r() * 2) * 3600), measuredLocal: at },
          );
        }
        await tx.insert(metrics).values(m);
      }
    }
    const teamId = newId("team");
    // Cora started the team 40 days ago and invited Ava and Dan that day; they joined the next.
    const started = new Date(now.getTime() - 40 * 86_400_000);
    const joined = new Date(started.getTime() + 86_400_000);
    await tx.insert(teams).values({ id: teamId, name: "Harbor Runners", createdBy: ids["cora@example.com"]!, createdAt: started });
    await tx.insert(teamMemberships).values([
      { teamId, userId: ids["cora@example.com"]!, role: "coach", status: "active", invitedAt: started, joinedAt: started },
      { teamId, userId: ids["ava@example.com"]!, role: "athlete", status: "active", invitedAt: started, joinedAt: joined, invitedBy: ids["cora@example.com"]! },
      { teamId, userId: ids["dan@example.com"]!, role: "athlete", status: "active", invitedAt: started, joinedAt: joined, invitedBy: ids["cora@example.com"]! },
    ]);
    await tx.insert(oauthClients).values([
      {
        clientId: DEMO_CONFIDENTIAL_CLIENT_ID,
        ownerId: ids["dev@example.com"]!,
        name: "Demo Training Log",
        kind: "confidential",
        secretHash: sha256Hex(DEMO_CONFIDENTIAL_SECRET),
        redirectUris: ["http://127.0.0.1:8976/callback", `${opts.baseUrl}/demo/callback`],
        homepageUrl: `${opts.baseUrl}/demo/callback`,
      },
      {
        clientId: "demo-mobile",
        ownerId: ids["dev@example.com"]!,
        name: "Demo Mobile",
        kind: "public",
        secretHash: null,
        redirectUris: ["http://127.0.0.1/callback"],
      },
    ]);
  });
  return "seeded";
}
