import type { teamMemberships, users } from "../db/schema";
import type { RosterEntry } from "./console-schemas";

/**
 * A membership as a coach may see it. Until the invitation is accepted, only the email the
 * coach typed and the status: who the account is (its id and name) waits for the invitee's yes.
 */
export function rosterEntry(m: typeof teamMemberships.$inferSelect, person: Pick<typeof users.$inferSelect, "name" | "email">): RosterEntry {
  const accepted = m.status === "active";
  return {
    athlete_id: accepted ? m.userId : null,
    name: accepted ? person.name : null,
    email: person.email,
    role: m.role,
    status: m.status,
    invited_at: m.invitedAt.toISOString(),
    joined_at: m.joinedAt?.toISOString() ?? null,
  };
}
