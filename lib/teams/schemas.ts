import { z } from "zod";
import { Cursor, Instant, Limit, listOf } from "../http/schemas";
import { COACHING_ROLES } from "./coaching";

export const Team = z
  .object({
    id: z.string().meta({ example: "team_9pQ2mN4rT1vB8kL3pZaX9c" }),
    name: z.string(),
    role: z.enum(COACHING_ROLES).meta({ description: "The caller's role in the team." }),
  })
  .meta({ id: "Team" });

export const TeamMember = z
  .object({
    athlete_id: z.string(),
    name: z.string().nullable(),
    role: z.enum(["athlete", "coach", "admin"]),
    joined_at: Instant,
  })
  .meta({ id: "TeamMember", description: "An active member: their `athlete_id` may be passed to athlete endpoints." });

export const PageQuery = z.object({ limit: Limit, cursor: Cursor });
export const TeamList = listOf(Team, "TeamList");
export const TeamMemberList = listOf(TeamMember, "TeamMemberList");
