// GET /api/console/activities/summary?group_by=week: the athlete's own training volume per period and sport (the weekly chart on /activities).
import { SummaryQuery, TrainingSummary, trainingSummary } from "@/lib/activities/training-summary";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", query: SummaryQuery, response: { status: 200, schema: TrainingSummary } }, ({ ctx, query }) =>
    trainingSummary({ ctx, athleteId: "me", query }),
  ),
});
