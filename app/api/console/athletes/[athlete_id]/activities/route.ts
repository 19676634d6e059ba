// GET /api/console/athletes/{athlete_id}/activities?cursor=: a team member's activities, newest first, for their coach (reach and input as /v1's).
import { z } from "zod";
import { listActivities } from "@/lib/activities/list-activities";
import { ActivityList, ListActivitiesQuery } from "@/lib/activities/schemas";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { AthleteIdParam } from "@/lib/http/schemas";

const params = z.strictObject({ athlete_id: AthleteIdParam });

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params, query: ListActivitiesQuery, response: { status: 200, schema: ActivityList } }, ({ ctx, params, query }) =>
    listActivities({ ctx, athleteId: params.athlete_id, query }),
  ),
});
