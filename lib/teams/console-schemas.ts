import { z } from "zod";
import { Instant } from "../http/schemas";
import { HIDDEN_IN_NAME_MESSAGE, hasHiddenCharacters } from "../text";
import { COACHING_ROLES } from "./coaching";

// The console's view of teams: unlike the public API (schemas.ts), it shows invitations
// that have not been accepted, because the people managing them need to see them.

export const CreateTeamInput = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, "give the team a name")
    .max(100)
    // Shown to the athletes it invites: a bidi override would make it read as another team's.
    .refine((name) => !hasHiddenCharacters(name), HIDDEN_IN_NAME_MESSAGE),
});

export const InviteAthleteInput = z.strictObject({
  email: z
    .email("enter a valid email address")
    .max(254)
    .transform((e) => e.toLowerCase()),
});

const Role = z.enum(["athlete", "coach", "admin"]);

/**
 * One person on a roster. Until an invitation is accepted it shows only what the coach typed
 * (the email) and its status: `athlete_id` and `name` are null, so inviting an email reveals
 * nothing the invitee has not agreed to share.
 */
export const RosterEntry = z.object({
  athlete_id: z.string().nullable(),
  name: z.string().nullable(),
  email: z.string(),
  role: Role,
  status: z.enum(["invited", "active"]),
  invited_at: Instant,
  joined_at: Instant.nullable(),
});
export type RosterEntry = z.output<typeof RosterEntry>;

/** A team the signed-in person coaches or administers, with everyone on it or invited to it. */
export const CoachedTeam = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(COACHING_ROLES),
  members: z.array(RosterEntry),
});
export type CoachedTeam = z.output<typeof CoachedTeam>;

export const Invitation = z.object({
  team_id: z.string(),
  team_name: z.string(),
  role: Role,
  invited_by: z.string().nullable().meta({ description: "The inviter's name, when known: chosen by the inviter, so never shown alone." }),
  // A name and a team name are whatever the inviter typed: anyone can call themselves "Cora
  // Haines" and a team "Harbor Runners". The email is the account's own (one account per
  // address), so it tells a real coach's invitation from a look-alike.
  invited_by_email: z.string().nullable().meta({ description: "The inviter's account email, when the inviter still has an account." }),
  invited_at: Instant,
});
export type Invitation = z.output<typeof Invitation>;

export const Membership = z.object({
  team_id: z.string(),
  team_name: z.string(),
  role: Role,
  joined_at: Instant.nullable(),
});
export type Membership = z.output<typeof Membership>;

/** A team the person belongs to, as their teams page lists it. */
export const MyTeam = Membership.extend({
  can_leave: z.boolean().meta({
    description:
      "Whether leaving would be accepted now: always for an athlete; for a coach or admin only while another coaches the team, since a team keeps one.",
  }),
});
export type MyTeam = z.output<typeof MyTeam>;

/** The signed-in person's side of teams: what they were invited to and what they belong to. */
export const MyMemberships = z.object({
  invitations: z.array(Invitation),
  teams: z.array(MyTeam),
});
export type MyMemberships = z.output<typeof MyMemberships>;
