import { z } from "zod";
import { defineOperation } from "../http/operation";
import { CreateUploadFields, MAX_UPLOAD_BYTES, Upload, UploadIdParam } from "./schemas";

/** The upload body's one file part, and its limit, for both the API and the console route. */
export const UPLOAD_MULTIPART = { fileField: "file", maxFileBytes: MAX_UPLOAD_BYTES, maxFieldBytes: 1024, maxFields: 3 } as const;

/** Where an upload is polled. */
export const uploadLocation = (u: { id: string }) => `/v1/uploads/${u.id}`;

export const createUploadOp = defineOperation({
  method: "POST",
  path: "/v1/athletes/me/uploads",
  operationId: "createUpload",
  summary: "Upload an activity file",
  description:
    "A FIT, GPX or TCX file (each optionally gzip-compressed, at most 25 MiB, decompressed too) as the `file` part of a " +
    "`multipart/form-data` body. The kind is recognised from the content. Answers `202` with the upload, " +
    "`Location: /v1/uploads/{id}` to poll, while the file is processed; every activity it holds emits `activity.created`. " +
    "A second upload with the same `external_id` by the same athlete and client answers the first upload as it stands " +
    "(409 `conflict` if the file bytes differ). Accepts `Idempotency-Key` (the file counts in the request it names).",
  tag: "Uploads",
  auth: "athlete",
  scope: "activities.write",
  body: CreateUploadFields,
  multipart: UPLOAD_MULTIPART,
  idempotent: true,
  response: { status: 202, description: "The upload, processing (or, for a repeated `external_id`, as it stands).", schema: Upload, location: uploadLocation },
  errors: ["invalid_request", "invalid_enum_value", "unsupported_file_type", "payload_too_large", "conflict", "idempotency_key_in_use", "idempotency_key_reused"],
});

export const getUploadOp = defineOperation({
  method: "GET",
  path: "/v1/uploads/{upload_id}",
  operationId: "getUpload",
  summary: "Get an upload",
  description: "Poll an upload until its `status` is `succeeded` (its activities in `activity_ids`) or `failed` (`error` says why). Only the uploading athlete's tokens see it.",
  tag: "Uploads",
  auth: "athlete",
  scope: "activities.write",
  params: z.object({ upload_id: UploadIdParam }),
  response: { status: 200, description: "The upload.", schema: Upload },
  errors: ["not_found"],
});
