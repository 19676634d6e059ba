// GET /api/console/uploads/{upload_id}: the signed-in athlete polls an upload.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { getUpload } from "@/lib/uploads/get-upload";
import { Upload } from "@/lib/uploads/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params: pathParams("upload_id"), response: { status: 200, schema: Upload } }, ({ ctx, params }) =>
    getUpload({ ctx, uploadId: params.upload_id }),
  ),
});
