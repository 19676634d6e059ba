import { and, eq, inArray, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { teamMemberships } from "../db/schema";

/** The roles that run a team: they invite and remove its athletes and reach its active members (SPEC §5.5). */
export const COACHING_ROLES = ["coach", "admin"] as const;
export type CoachingRole = (typeof COACHING_ROLES)[number];

/** `teamMemberships`' status and role columns, or an alias's: typed by what they hold, so another table's `status` does not fit. */
type MembershipColumns = {
  status: AnyPgColumn<{ data: (typeof teamMemberships.status)["_"]["data"] }>;
  role: AnyPgColumn<{ data: (typeof teamMemberships.role)["_"]["data"] }>;
};

/**
 * The one condition for "coaches this team now": a membership row that is active, as coach or
 * admin. Every reach check, team list and coach-only write asks it of `teamMemberships` or of an
 * alias of it (`canReach` joins the table to itself).
 */
export function coachesNow(m: MembershipColumns = teamMemberships): SQL {
  return and(eq(m.status, "active"), inArray(m.role, [...COACHING_ROLES]))!;
}

/** The role of a row read under `coachesNow()`, typed as such (the column's type is every role). */
export function coachingRole(role: string): CoachingRole {
  if (!(COACHING_ROLES as readonly string[]).includes(role)) throw new Error(`a coaching membership has role ${role}`);
  return role as CoachingRole;
}
