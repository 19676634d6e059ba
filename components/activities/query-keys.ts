/** TanStack Query keys shared by the activity list and detail, so a change in one refreshes the other. */
export const ACTIVITIES_KEY = ["activities"] as const;
export const activityKey = (id: string) => ["activities", "one", id] as const;
