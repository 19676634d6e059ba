import { z } from "zod";
import { defineOperation } from "../http/operation";
import { AthleteIdParam } from "../http/schemas";
import { Activity, ActivityList, CreateActivityInput, ListActivitiesQuery, UpdateActivityInput } from "./schemas";
import { ActivityStreams, ExportQuery, LapList, StreamsQuery } from "./file-schemas";
import { EXPORT_CONTENT_TYPES as FILE_CONTENT_TYPES } from "../files/export";

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
  response: { status: 201, description: "The activity created.", schema: Activity, location: (a) => `/v1/activities/${a.id}` },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "invalid_parameter_combination", "payload_too_large", "idempotency_key_in_use", "idempotency_key_reused"],
});

export const updateActivityOp = defineOperation({
  method: "PATCH",
  path: "/v1/activities/{activity_id}",
  operationId: "updateActivity",
  summary: "Change an activity",
  description: "Changes the fields sent (null clears a measurement), and the average speed with distance or time unless the change sends one, and emits `activity.updated`; a change that gives every field the value it has writes nothing and emits nothing. Only the activity's athlete may change it.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.write",
  params: z.object({ activity_id: ActivityIdParam }),
  body: UpdateActivityInput,
  response: { status: 200, description: "The activity as changed.", schema: Activity },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "invalid_parameter_combination", "payload_too_large", "athlete_not_reachable", "not_found"],
});

export const deleteActivityOp = defineOperation({
  method: "DELETE",
  path: "/v1/activities/{activity_id}",
  operationId: "deleteActivity",
  summary: "Delete an activity",
  description:
    "Deletes the activity with its streams and laps and emits `activity.deleted`. Once every activity made from an uploaded file is deleted, the file is deleted too, and the same file can be uploaded again. Only the activity's athlete may delete it. Accepts `Idempotency-Key`.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.write",
  params: z.object({ activity_id: ActivityIdParam }),
  idempotent: true,
  response: { status: 204, description: "Deleted; `GET` on it answers 404 from now on." },
  errors: ["athlete_not_reachable", "not_found", "idempotency_key_in_use", "idempotency_key_reused"],
});

export const getActivityStreamsOp = defineOperation({
  method: "GET",
  path: "/v1/activities/{activity_id}/streams",
  operationId: "getActivityStreams",
  summary: "Get an activity's streams",
  description:
    "The samples of an activity read from a file, channel by channel, optionally downsampled (`resolution`) by an algorithm that keeps the curve's shape, its first and last sample, and only ever returns recorded samples. The `latlng` stream also needs `location.read`: asked for without it, the answer is 403; by default it is left out. An activity recorded by hand answers `original_size: 0` and `streams: {}`.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.read",
  params: z.object({ activity_id: ActivityIdParam }),
  query: StreamsQuery,
  response: { status: 200, description: "The streams.", schema: ActivityStreams },
  errors: ["invalid_enum_value", "not_found"],
});

export const listActivityLapsOp = defineOperation({
  method: "GET",
  path: "/v1/activities/{activity_id}/laps",
  operationId: "listActivityLaps",
  summary: "List an activity's laps",
  description:
    "The laps of the file the activity was read from, in order. A GPX file, or a file without laps, gives one lap covering the activity; an activity recorded by hand has none.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.read",
  params: z.object({ activity_id: ActivityIdParam }),
  response: { status: 200, description: "Every lap, in order.", schema: LapList },
  errors: ["not_found"],
});

/** The media types an export answers: a generated file's, an original's kind's, or gzip for a compressed upload as received. */
export const EXPORT_CONTENT_TYPES = { ...FILE_CONTENT_TYPES, gzip: "application/gzip" } as const;

export const exportActivityOp = defineOperation({
  method: "GET",
  path: "/v1/activities/{activity_id}/export",
  operationId: "exportActivity",
  summary: "Download an activity as a file",
  description:
    "`format=original` answers the uploaded file byte for byte as it was received (a gzip-compressed upload as the same gzip bytes, `application/gzip`); `fit`, `gpx` and `tcx` answer a file generated from the streams and laps, which this service and other tools read back to the same start, elapsed time, distance and channels. Always `Content-Disposition: attachment`, the file named after the activity and its local date (`Morning-Ride-2026-03-01.gpx`); the original is marked `-original` (`Morning-Ride-2026-03-01-original.fit`, `….gpx.gz`), so it never shares a name with the file generated in its own format. An activity recorded by hand has no file: 404; one that recorded no positions (a trainer, a treadmill, a pool) has no GPX track: 404 for `gpx`.",
  tag: "Activities",
  auth: "athlete",
  scope: "activities.read",
  extraScope: "location.read",
  params: z.object({ activity_id: ActivityIdParam }),
  query: ExportQuery,
  response: {
    status: 200,
    description: "The file.",
    files: {
      contentTypes: Object.values(EXPORT_CONTENT_TYPES),
      description: "`original` answers the media type of the kind uploaded, or `application/gzip` for a compressed upload.",
    },
  },
  errors: ["invalid_enum_value", "not_found"],
});
