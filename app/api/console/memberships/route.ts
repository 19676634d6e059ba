// GET /api/console/memberships: the person's pending invitations and the teams they belong to.
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { MyMemberships } from "@/lib/teams/console-schemas";
import { listMyMemberships } from "@/lib/teams/list-my-memberships";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: MyMemberships } }, ({ ctx }) => listMyMemberships({ ctx })),
});
