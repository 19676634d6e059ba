import { z } from "zod";

/** CONTRACT §2. `plain` is what the consent screen and token form show. */
export const SCOPES = {
  "athlete.read": { plain: "Read your profile: name, email, timezone and connected devices" },
  "activities.read": { plain: "Read your activities" },
  "activities.write": { plain: "Add, upload, edit and delete your activities" },
  "metrics.read": { plain: "Read your body metrics: weight, resting heart rate, HRV and sleep" },
  "metrics.write": { plain: "Record and delete your body metrics" },
  "teams.read": { plain: "See the teams you coach or administer, and their members" },
  "location.read": { plain: "See the routes of your activities, where you trained" },
} as const;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as [Scope, ...Scope[]];
export const ScopeSchema = z.enum(SCOPE_NAMES);

export function isScope(s: string): s is Scope {
  return Object.hasOwn(SCOPES, s);
}
