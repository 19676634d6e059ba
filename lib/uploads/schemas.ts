import { z } from "zod";
import { ActivityName, SportType } from "../activities/schemas";
import { Instant } from "../http/schemas";
import { FILE_KINDS } from "../files/types";

/** The largest file an upload may carry, as sent and after decompression (CONTRACT §11). */
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

export const UPLOAD_STATUSES = ["processing", "succeeded", "failed"] as const;
export const UPLOAD_ERROR_CODES = ["invalid_file", "no_activity_data", "duplicate_activity"] as const;

export const UploadError = z
  .object({
    code: z.enum(UPLOAD_ERROR_CODES),
    detail: z.string(),
  })
  .meta({ id: "UploadError", description: "Why the file did not become an activity, in words a person understands." });

export const Upload = z
  .object({
    id: z.string().meta({ example: "upl_3kT9qW2mN8vB4xL7pZaR1c" }),
    status: z.enum(UPLOAD_STATUSES),
    activity_id: z
      .string()
      .nullable()
      .meta({ description: "The first activity created; on `duplicate_activity` the existing activity; else null." }),
    activity_ids: z.array(z.string()).meta({ description: "Every activity created, in the file's order (a multisport FIT file gives one per session)." }),
    error: UploadError.nullable(),
    data_type: z.enum(FILE_KINDS),
    file_name: z.string().nullable(),
    external_id: z.string().nullable(),
    created_at: Instant,
    updated_at: Instant,
  })
  .meta({ id: "Upload", description: "An activity file sent to the service, and what became of it." });
export type UploadWire = z.input<typeof Upload>;

/**
 * The text fields of an upload's `multipart/form-data` body; the `file` part is read apart
 * (lib/uploads/multipart.ts). Strict: an unknown field is a 400 naming it.
 */
export const CreateUploadFields = z
  .strictObject({
    name: ActivityName.optional().meta({ description: "The activity's name (not blank; white space around it is removed); default: the file's own, else e.g. \"Morning Run\"." }),
    sport_type: SportType.optional().meta({ description: "Overrides the sport the file names." }),
    external_id: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .meta({
        description:
          "The client's own id for the file: sending it again answers the first upload as it stands, until every activity made from that upload is deleted (then it names a new upload).",
      }),
  })
  .meta({ id: "CreateUploadFields" });
export type CreateUploadFields = z.output<typeof CreateUploadFields>;

export const UploadIdParam = z.string().min(1).max(64).meta({ example: "upl_3kT9qW2mN8vB4xL7pZaR1c" });
