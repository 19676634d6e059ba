// POST /v1/athletes/me/uploads: send an activity file; it is processed after the answer.
import { handle, route } from "@/lib/http/api-route";
import { createUploadOp } from "@/lib/uploads/operations";
import { createUpload, prepareUpload } from "@/lib/uploads/create-upload";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  POST: handle(
    createUploadOp,
    ({ file }) => prepareUpload(file),
    ({ ctx, rawParams, body, prepared }) => createUpload({ ctx, athleteId: String(rawParams.athlete_id), fields: body, file: prepared }),
  ),
});
