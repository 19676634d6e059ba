import type { activities } from "../db/schema";
import { toWireLocal } from "../time/local";
import type { ActivityWire } from "./schemas";

export function toActivityWire(a: typeof activities.$inferSelect): ActivityWire {
  return {
    id: a.id,
    athlete_id: a.athleteId,
    name: a.name,
    sport_type: a.sportType as ActivityWire["sport_type"],
    start_local: toWireLocal(a.startLocal),
    elapsed_time_s: a.elapsedTimeS,
    moving_time_s: a.movingTimeS,
    distance_m: a.distanceM,
    elevation_gain_m: a.elevationGainM,
    average_speed_mps: a.averageSpeedMps,
    max_speed_mps: a.maxSpeedMps,
    average_heart_rate_hz: a.averageHeartRateHz,
    max_heart_rate_hz: a.maxHeartRateHz,
    average_power_w: a.averagePowerW,
    energy_j: a.energyJ,
    source: a.source,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
