import type { uploads } from "../db/schema";
import type { UploadWire } from "./schemas";

/** The wire shape of an upload row: only the fields the `Upload` schema names ride out. */
export function toUploadWire(u: typeof uploads.$inferSelect): UploadWire {
  return {
    id: u.id,
    status: u.status,
    activity_id: u.activityIds[0] ?? u.duplicateOf ?? null,
    activity_ids: u.activityIds,
    error: u.errorCode ? { code: u.errorCode as NonNullable<UploadWire["error"]>["code"], detail: u.errorDetail ?? "" } : null,
    data_type: u.dataType,
    file_name: u.fileName,
    external_id: u.externalId,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}
