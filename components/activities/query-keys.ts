/** TanStack Query keys shared by the activity list and detail, so a change in one refreshes the other. */
export const ACTIVITIES_KEY = ["activities"] as const;
export const activityKey = (id: string) => ["activities", "one", id] as const;
export const uploadKey = (id: string) => ["uploads", id] as const;
export const streamsKey = (id: string) => ["activities", "one", id, "streams"] as const;
export const lapsKey = (id: string) => ["activities", "one", id, "laps"] as const;
