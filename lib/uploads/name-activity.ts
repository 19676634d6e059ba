import type { SportType } from "../activities/schemas";
import type { z } from "zod";

const SPORT_WORDS: Record<z.output<typeof SportType>, string> = {
  run: "Run",
  trail_run: "Trail Run",
  ride: "Ride",
  virtual_ride: "Virtual Ride",
  swim: "Swim",
  walk: "Walk",
  hike: "Hike",
  row: "Row",
  ski: "Ski",
  strength: "Strength Training",
  yoga: "Yoga",
  other: "Workout",
};

/** "Morning Run", "Evening Ride": the name an app shows for an activity nobody named, by its local hour. */
export function defaultActivityName(sport: z.output<typeof SportType>, startLocal: string): string {
  const hour = Number(startLocal.slice(11, 13));
  const part = hour >= 5 && hour < 12 ? "Morning" : hour >= 12 && hour < 17 ? "Afternoon" : hour >= 17 && hour < 21 ? "Evening" : "Night";
  return `${part} ${SPORT_WORDS[sport]}`;
}
