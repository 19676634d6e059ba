// GET /v1/uploads/{upload_id}: poll an upload.
import { handle, route } from "@/lib/http/api-route";
import { getUploadOp } from "@/lib/uploads/operations";
import { getUpload } from "@/lib/uploads/get-upload";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getUploadOp, ({ ctx, params }) => getUpload({ ctx, uploadId: params.upload_id })),
});
