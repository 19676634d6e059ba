import { sql } from "drizzle-orm";
import { activities } from "../db/schema";

const ISO_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
const ISO_LOCAL = 'YYYY-MM-DD"T"HH24:MI:SS';

/**
 * An activity's wire form (`ActivityWire`), as JSON text built by PostgreSQL: the same object
 * `toActivityWire` makes in JavaScript, key for key (a test compares the two on the same rows).
 * Lists use it so that fifty rows are not decoded, mapped and re-encoded one field at a time.
 */
export const activityWireJson = sql<string>`json_build_object(
  'id', ${activities.id},
  'athlete_id', ${activities.athleteId},
  'name', ${activities.name},
  'sport_type', ${activities.sportType},
  'start_local', to_char(${activities.startLocal}, ${sql.raw(`'${ISO_LOCAL}'`)}),
  'elapsed_time_s', ${activities.elapsedTimeS},
  'moving_time_s', ${activities.movingTimeS},
  'distance_m', ${activities.distanceM},
  'elevation_gain_m', ${activities.elevationGainM},
  'average_speed_mps', ${activities.averageSpeedMps},
  'max_speed_mps', ${activities.maxSpeedMps},
  'average_heart_rate_hz', ${activities.averageHeartRateHz},
  'max_heart_rate_hz', ${activities.maxHeartRateHz},
  'average_power_w', ${activities.averagePowerW},
  'energy_j', ${activities.energyJ},
  'source', ${activities.source},
  'created_at', to_char(${activities.createdAt} at time zone 'UTC', ${sql.raw(`'${ISO_UTC}'`)}),
  'updated_at', to_char(${activities.updatedAt} at time zone 'UTC', ${sql.raw(`'${ISO_UTC}'`)})
)::text`;
