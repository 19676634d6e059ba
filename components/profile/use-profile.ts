"use client";

import { useQuery } from "@tanstack/react-query";
import { consoleFetch } from "@/components/console/api";
import type { AthleteWire } from "@/lib/athletes/schemas";

export const PROFILE_KEY = ["profile"] as const;

/** The signed-in athlete's profile: the activity pages read units and timezone from it. */
export function useProfile() {
  return useQuery({ queryKey: PROFILE_KEY, queryFn: () => consoleFetch<AthleteWire>("/api/console/profile") });
}
