// GET /api/console/memberships: the person's pending invitations and the teams they belong to.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { listMyMemberships } from "@/lib/teams/list-my-memberships";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx }) => listMyMemberships({ ctx })),
});
