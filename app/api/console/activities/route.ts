// GET /api/console/activities?cursor=: the athlete's own activities, newest first; POST: record one.
import { createActivity } from "@/lib/activities/create-activity";
import { listActivities } from "@/lib/activities/list-activities";
import { CreateActivityInput, ListActivitiesQuery } from "@/lib/activities/schemas";
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { parseWith } from "@/lib/http/validation";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, url }) =>
    listActivities({ ctx, athleteId: "me", query: parseWith(ListActivitiesQuery, Object.fromEntries(url.searchParams), "query") }),
  ),
  POST: consoleHandler({ body: CreateActivityInput, status: 201 }, ({ ctx, body }) =>
    createActivity({ ctx, athleteId: "me", input: body }),
  ),
});
