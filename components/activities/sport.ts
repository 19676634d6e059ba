import type { ActivityWire } from "@/lib/activities/schemas";

export type SportType = ActivityWire["sport_type"];

// Keyed by the schema's enum, so a sport added there fails to compile here until it has a label.
export const SPORT_LABELS: Record<SportType, string> = {
  run: "Run",
  trail_run: "Trail run",
  ride: "Ride",
  virtual_ride: "Virtual ride",
  swim: "Swim",
  walk: "Walk",
  hike: "Hike",
  row: "Row",
  ski: "Ski",
  strength: "Strength",
  yoga: "Yoga",
  other: "Other",
};

export const SPORTS = Object.keys(SPORT_LABELS) as SportType[];
