import type { SportType } from "../activities/schemas";
import type { z } from "zod";

type Sport = z.output<typeof SportType>;

// The sport mapping of CONTRACT §11, one table per format. Anything not listed is `other`.
// "The skiing sports" are FIT's three whose names say so: cross-country, alpine and water skiing.

/** FIT `sport` → sport type. Names are fitsdk's (camelCase of the profile's sport enum). */
const FIT_SPORT: Record<string, Sport> = {
  running: "run",
  cycling: "ride",
  swimming: "swim",
  walking: "walk",
  hiking: "hike",
  rowing: "row",
  alpineSkiing: "ski",
  crossCountrySkiing: "ski",
  waterSkiing: "ski",
};

/** FIT `sub_sport` that decide the sport whatever the `sport` says. */
const FIT_SUB_SPORT: Record<string, Sport> = {
  indoorRowing: "row",
  yoga: "yoga",
};

/** FIT `sub_sport` that refine one sport. */
const FIT_SPORT_SUB_SPORT: Record<string, Record<string, Sport>> = {
  running: { trail: "trail_run" },
  cycling: { indoorCycling: "virtual_ride", virtualActivity: "virtual_ride" },
  training: { strengthTraining: "strength" },
};

/** The sport of a FIT session (or of a `sport` message in a file without one). */
export function fitSport(sport: unknown, subSport: unknown): Sport {
  const s = typeof sport === "string" ? sport : "";
  const sub = typeof subSport === "string" ? subSport : "";
  return FIT_SPORT_SUB_SPORT[s]?.[sub] ?? FIT_SUB_SPORT[sub] ?? FIT_SPORT[s] ?? "other";
}

const TCX_SPORT: Record<string, Sport> = { running: "run", biking: "ride" };

/** The sport of a TCX `<Activity Sport="…">` (Running, Biking, Other). */
export function tcxSport(sport: unknown): Sport {
  return (typeof sport === "string" && TCX_SPORT[sport.trim().toLowerCase()]) || "other";
}

const GPX_TYPE: Record<string, Sport> = {
  running: "run",
  run: "run",
  "9": "run",
  cycling: "ride",
  biking: "ride",
  ride: "ride",
  "1": "ride",
  hiking: "hike",
  "4": "hike",
  walking: "walk",
  "10": "walk",
  swimming: "swim",
};

/** The sport of a GPX `<trk><type>`: the words writers use, and Strava's numeric activity codes. */
export function gpxSport(type: unknown): Sport {
  return (typeof type === "string" && GPX_TYPE[type.trim().toLowerCase()]) || "other";
}
