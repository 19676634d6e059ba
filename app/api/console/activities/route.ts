// GET /api/console/activities?cursor=: the athlete's own activities, newest first; POST: record one.
import { createActivity } from "@/lib/activities/create-activity";
import { listActivities } from "@/lib/activities/list-activities";
import { Activity, ActivityList, CreateActivityInput, ListActivitiesQuery } from "@/lib/activities/schemas";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", query: ListActivitiesQuery, response: { status: 200, schema: ActivityList } }, ({ ctx, query }) =>
    listActivities({ ctx, athleteId: "me", query }),
  ),
  POST: consoleHandler({ method: "POST", idempotent: true, body: CreateActivityInput, response: { status: 201, schema: Activity } }, ({ ctx, body }) =>
    createActivity({ ctx, athleteId: "me", input: body }),
  ),
});
