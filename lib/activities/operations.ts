import { z } from "zod";
import { defineOperation } from "../http/operation";
import { AthleteIdParam } from "../http/schemas";
import { Activity, ActivityList, CreateActivityInput, ListActivitiesQuery, UpdateActivityInput } from "./schemas";

const ActivityIdParam = z.string().min(1).max(64).meta({ example: "act_7hQ2mN4rT1vB8kL3pZaX9c" });

export const listActivitiesOp = defineOperation({
  method: "GET",
  path: "/v1/athletes/{athlete_id}/activities",
  operationId: "listActivities",
  summary: "List an athlete's activities",
  description:
    "Newest first. `start` and `end` are local dates in the athlete's timezone (`start` included, `end` excluded). Keyset-paginated: follow `next_cursor`.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.read",
  params: z.object({ athlete_id: AthleteIdParam }),
  query: ListActivitiesQuery,
  response: { status: 200, description: "A page of activities.", schema: ActivityList },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "invalid_parameter_combination", "invalid_cursor", "athlete_not_reachable"],
});

export const getActivityOp = defineOperation({
  method: "GET",
  path: "/v1/activities/{activity_id}",
  operationId: "getActivity",
  summary: "Get an activity",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.read",
  params: z.object({ activity_id: ActivityIdParam }),
  response: { status: 200, description: "The activity.", schema: Activity },
  errors: ["not_found"],
});

export const createActivityOp = defineOperation({
  method: "POST",
  path: "/v1/athletes/me/activities",
  operationId: "createActivity",
  summary: "Record an activity",
  description: "Creates an activity for the token's athlete and emits `activity.created`. Accepts `Idempotency-Key`.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.write",
  body: CreateActivityInput,
  idempotent: true,
  response: { status: 201, description: "The activity created.", schema: Activity },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "payload_too_large", "idempotency_key_in_use", "idempotency_key_reused"],
});

export const updateActivityOp = defineOperation({
  method: "PATCH",
  path: "/v1/activities/{activity_id}",
  operationId: "updateActivity",
  summary: "Change an activity",
  description: "Changes the fields sent (null clears a measurement) and emits `activity.updated`. Only the activity's athlete may change it.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.write",
  params: z.object({ activity_id: ActivityIdParam }),
  body: UpdateActivityInput,
  response: { status: 200, description: "The activity as changed.", schema: Activity },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "payload_too_large", "athlete_not_reachable", "not_found"],
});
