import { ConsoleApiError, isClientError, retryAfterOf } from "@/components/console/api";
import type { UploadWire } from "./files-api";
import { MAX_UPLOAD_BYTES } from "./files-api";
import { UploadSendError } from "./send-upload";

/**
 * What a person reads when a file did not become an activity. The service's own `detail` says
 * what exactly was wrong with the bytes; this says what it means and what to do.
 */
export type UploadProblem = {
  headline: string;
  detail: string | null;
  /** On `duplicate_activity`: the activity the same file already made. */
  existingActivityId: string | null;
  /** Whether sending the same file again could go differently (the network, the server, a sign-in). */
  retryable: boolean;
};

const MIB = 1024 * 1024;

/** Upload `error.code` values (CONTRACT §11) in words. */
export function describeUploadError(upload: Pick<UploadWire, "error" | "activity_id">): UploadProblem {
  const detail = upload.error?.detail ?? null;
  switch (upload.error?.code) {
    case "invalid_file":
      return { headline: "This file is damaged or incomplete, so it could not be read.", detail, existingActivityId: null, retryable: false };
    case "no_activity_data":
      return {
        headline: "This file holds no activity: it has no timed samples (a settings or workout file, for example).",
        detail,
        existingActivityId: null,
        retryable: false,
      };
    case "duplicate_activity":
      return { headline: "You already uploaded this file.", detail: null, existingActivityId: upload.activity_id, retryable: false };
    default:
      return { headline: "This file could not be turned into an activity.", detail, existingActivityId: null, retryable: false };
  }
}

/**
 * Why the upload request itself was refused, from its status and problem `code`, and the size of
 * the file that was sent (`sentBytes`), where known.
 */
export function describeSendFailure(status: number, code: string | undefined, detail: string | undefined, sentBytes?: number): UploadProblem {
  const base = { detail: null, existingActivityId: null };
  if (status === 413 || code === "payload_too_large") {
    // The service refuses a file over the limit as sent and a compressed one over it once
    // decompressed alike (CONTRACT §11: 413 `payload_too_large`); a file sent within the limit
    // was refused for what it unpacks to, and "larger than 25 MiB" beside its size would not be true.
    const unpacked = sentBytes !== undefined ? sentBytes <= MAX_UPLOAD_BYTES : /decompress/i.test(detail ?? "");
    const headline = unpacked
      ? `This file is compressed, and its content is larger than ${MAX_UPLOAD_BYTES / MIB} MiB once uncompressed, the most one upload may hold.`
      : `This file is larger than ${MAX_UPLOAD_BYTES / MIB} MiB, the most one upload may hold.`;
    return { ...base, headline, retryable: false };
  }
  if (code === "unsupported_file_type")
    return { ...base, headline: "This is not a FIT, GPX or TCX file (compressed with gzip or not), so it cannot be uploaded.", retryable: false };
  // The banner says the session ended (components/console/session-ended-banner.tsx); this says what became of the file.
  if (status === 401) return { ...base, headline: "Not uploaded. Once you are signed in, upload it again.", retryable: true };
  if (status === 429) return { ...base, headline: "Too many uploads at once. Wait a moment and try again.", retryable: true };
  // Sent again while the first send of it is still being taken (its key is in use): once that
  // one is done, trying again is answered with what it made.
  if (code === "idempotency_key_in_use") return { ...base, headline: "This file is still being received from an earlier try. Wait a moment and try again.", retryable: true };
  if (status === 0) return { ...base, headline: "The file could not be sent: the connection failed. Check it and try again.", retryable: true };
  if (status >= 500) return { ...base, headline: "The service could not take the file just now. Try again in a moment.", retryable: true };
  return { ...base, headline: "The file was refused.", detail: detail ?? null, retryable: false };
}

/** Checked before sending, so a person learns at once what the service would refuse anyway. */
export function checkBeforeSending(file: { size: number }): UploadProblem | null {
  if (file.size > MAX_UPLOAD_BYTES) return describeSendFailure(413, "payload_too_large", undefined, file.size);
  if (file.size === 0) return { headline: "This file is empty.", detail: null, existingActivityId: null, retryable: false };
  return null;
}

/**
 * Why a file never reached processing, in words: refused before sending (`rejected`), or the
 * upload request failed (`sendError`, an `UploadSendError` or anything the browser threw).
 */
export function sendProblemOf(item: { rejected: UploadProblem | null; sendError: unknown; file: { size: number } }): UploadProblem | null {
  if (item.rejected) return item.rejected;
  if (item.sendError instanceof UploadSendError) return describeSendFailure(item.sendError.status, item.sendError.code, item.sendError.detail, item.file.size);
  return item.sendError ? describeSendFailure(0, undefined, undefined) : null;
}

/**
 * Why the outcome of a file that was sent could not be learnt, in words for its row, and whether
 * its row stops asking (`final`: asking again would only be answered the same, until the person
 * asks with "Check again"). An ended session is said in words: the banner says it for the whole
 * page, but "Not loaded." would not tell what became of the file, which was received. A 429 or
 * a 503 is no failure yet: the row asks again once the answer's Retry-After is over.
 */
export function describeCheckProblem(error: Error): { text: string; final: boolean } {
  if (error instanceof ConsoleApiError && error.status === 401)
    return { text: "Could not learn how the upload went: you are no longer signed in. The file was received; once you are signed in again, check again.", final: true };
  const wait = retryAfterOf(error);
  if (wait !== null) {
    const why = error instanceof ConsoleApiError && error.status === 429 ? "the service was asked too often" : "the service is busy";
    return { text: `Could not learn how the upload went yet: ${why}. Asking again in ${Math.max(1, Math.ceil(wait / 1000))} s.`, final: false };
  }
  return { text: `Could not learn how the upload went: ${error.message}`, final: isClientError(error) };
}

/**
 * What became of a file, in one sentence for the upload list's live region (a screen reader
 * says it once, as it happens); null while there is no outcome yet.
 */
export function outcomeAnnouncement(item: {
  file: { name: string; size: number };
  rejected: UploadProblem | null;
  sendError: unknown;
  accepted: Pick<UploadWire, "status" | "error" | "activity_id" | "activity_ids"> | null;
}): string | null {
  const sendProblem = sendProblemOf(item);
  const name = item.file.name;
  if (sendProblem) return `${name}: ${sendProblem.headline}`;
  const upload = item.accepted;
  if (upload?.status === "succeeded") {
    const n = upload.activity_ids.length;
    return `${name}: uploaded, ${n === 1 ? "its activity is ready" : `${n} activities are ready`}.`;
  }
  if (upload?.status === "failed") return `${name}: ${describeUploadError(upload).headline}`;
  return null;
}

/**
 * The activities an upload's row names: the ones it made; on `duplicate_activity`, the ones the
 * earlier upload of the same file made. The service names one of those (`activity_id`); every
 * one of them is known only where the queue still holds the earlier upload (`others`), and
 * `complete` says whether they are: a multisport file makes several, and naming one as "its
 * activity" would leave the others out.
 */
export function activitiesOfUpload(
  upload: Pick<UploadWire, "status" | "error" | "activity_id" | "activity_ids">,
  others: readonly Pick<UploadWire, "status" | "activity_ids">[],
): { ids: string[]; complete: boolean } {
  if (upload.status === "succeeded") return { ids: upload.activity_ids, complete: true };
  const existing = upload.error?.code === "duplicate_activity" ? upload.activity_id : null;
  if (!existing) return { ids: [], complete: true };
  const earlier = others.find((o) => o.status === "succeeded" && o.activity_ids.includes(existing));
  return earlier ? { ids: earlier.activity_ids, complete: true } : { ids: [existing], complete: false };
}

/**
 * The words before the links to the activities a file already made (`activitiesOfUpload`):
 * "Its activity", "Its 3 activities", or, where only the one the service named is known,
 * words that do not claim it is the only one.
 */
export function duplicateLead({ ids, complete }: { ids: readonly string[]; complete: boolean }): string {
  if (!complete) return "Made from it:";
  return ids.length === 1 ? "Its activity:" : `Its ${ids.length} activities:`;
}

/**
 * How an upload's row mentions one of its activities: its name, a link to its page while it
 * exists; once it is deleted (on its page, or found gone when asked), its name said as deleted,
 * with no link to a page that is not there any more.
 */
export function activityMention(a: { id: string; name: string | null; deleted: boolean }): { text: string; href: string | null } {
  if (a.deleted) return { text: `${a.name ?? "an activity"} (deleted)`, href: null };
  return { text: a.name ?? "…", href: `/activities/${encodeURIComponent(a.id)}` };
}
