// POST /api/console/uploads: the signed-in athlete sends an activity file (multipart, as the API takes it).
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { createUpload, prepareUpload } from "@/lib/uploads/create-upload";
import { UPLOAD_MULTIPART } from "@/lib/uploads/operations";
import { CreateUploadFields, Upload } from "@/lib/uploads/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: consoleHandler(
    { method: "POST", idempotent: true, body: CreateUploadFields, multipart: UPLOAD_MULTIPART, response: { status: 202, schema: Upload, location: (u) => `/api/console/uploads/${u.id}` } },
    async ({ file }) => prepareUpload(file),
    ({ ctx, body, prepared }) => createUpload({ ctx, athleteId: "me", fields: body, file: prepared }),
  ),
});
