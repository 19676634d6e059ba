import { describe, expect, it } from "vitest";
import { ConsoleApiError } from "@/components/console/api";
import { MAX_UPLOAD_BYTES, type UploadWire } from "./files-api";
import { UploadSendError } from "./send-upload";
import {
  activitiesOfUpload,
  activityMention,
  checkBeforeSending,
  describeCheckProblem,
  describeSendFailure,
  describeUploadError,
  duplicateLead,
  outcomeAnnouncement,
} from "./upload-outcome";

describe("describeUploadError", () => {
  it("says what each failure code means, keeping the service's detail", () => {
    const bad = describeUploadError({ activity_id: null, error: { code: "invalid_file", detail: "The FIT file's CRC does not match." } });
    expect(bad.headline).toMatch(/damaged or incomplete/);
    expect(bad.detail).toBe("The FIT file's CRC does not match.");
    expect(describeUploadError({ activity_id: null, error: { code: "no_activity_data", detail: "x" } }).headline).toMatch(/no activity/);
  });

  it("points a duplicate at the activity the same file already made", () => {
    const dup = describeUploadError({ activity_id: "act_1", error: { code: "duplicate_activity", detail: "x" } });
    expect(dup.headline).toMatch(/already uploaded/);
    expect(dup.existingActivityId).toBe("act_1");
  });

  it("has words for a code this console does not know yet (a newer service may add one)", () => {
    const error = { code: "something_new", detail: "d" } as unknown as UploadWire["error"];
    expect(describeUploadError({ activity_id: null, error }).detail).toBe("d");
  });
});

describe("describeSendFailure", () => {
  it("maps refusals of the upload request", () => {
    expect(describeSendFailure(413, "payload_too_large", "x").headline).toMatch(/larger than 25 MiB/);
    expect(describeSendFailure(400, "unsupported_file_type", "x").headline).toMatch(/not a FIT, GPX or TCX file/);
    expect(describeSendFailure(0, undefined, undefined).retryable).toBe(true);
    expect(describeSendFailure(503, "service_unavailable", undefined).retryable).toBe(true);
    // The banner says the session ended; the file's own line says only what became of it.
    const signedOut = describeSendFailure(401, "token_missing", undefined);
    expect(signedOut).toMatchObject({ retryable: true });
    expect(signedOut.headline).toMatch(/^Not uploaded\./);
    expect(signedOut.headline).not.toMatch(/session|signed out/i);
    const other = describeSendFailure(400, "invalid_request", "name is too long");
    expect(other.retryable).toBe(false);
    expect(other.detail).toBe("name is too long");
  });
});

describe("a file refused for its size", () => {
  it("says the content is over the limit once uncompressed when the file sent was within it (a small gzip), not that the file is", () => {
    // What the service answers for a 28 KiB gzip that unpacks past 25 MiB (lib/files/detect.ts).
    const detail = "The file is larger than 25 MiB once decompressed. Files are limited to 26214400 bytes (25 MiB), decompressed too.";
    const small = describeSendFailure(413, "payload_too_large", detail, 28 * 1024);
    expect(small.headline).toMatch(/content is larger than 25 MiB once uncompressed/);
    expect(small.headline).not.toMatch(/This file is larger than/);
    expect(small.retryable).toBe(false);
    // Without the size sent, the service's words tell the two apart.
    expect(describeSendFailure(413, "payload_too_large", detail).headline).toMatch(/once uncompressed/);
  });

  it("says the file itself is over the limit when it was", () => {
    const big = describeSendFailure(413, "payload_too_large", "Files are limited to 26214400 bytes (25 MiB).", MAX_UPLOAD_BYTES + 1);
    expect(big.headline).toMatch(/^This file is larger than 25 MiB/);
    expect(checkBeforeSending({ size: MAX_UPLOAD_BYTES + 1 })?.headline).toMatch(/^This file is larger than 25 MiB/);
  });
});

describe("checkBeforeSending", () => {
  it("refuses empty and oversized files before a byte is sent", () => {
    expect(checkBeforeSending({ size: MAX_UPLOAD_BYTES })).toBeNull();
    expect(checkBeforeSending({ size: MAX_UPLOAD_BYTES + 1 })?.headline).toMatch(/larger than/);
    expect(checkBeforeSending({ size: 0 })?.headline).toMatch(/empty/);
  });
});

describe("outcomeAnnouncement", () => {
  const file = { name: "run.gpx", size: 2000 };
  const none = { rejected: null, sendError: null, accepted: null };
  it("says what became of a file, with its name, once there is an outcome", () => {
    expect(outcomeAnnouncement({ ...none, file })).toBeNull();
    expect(outcomeAnnouncement({ ...none, file: { name: "empty.gpx", size: 0 }, rejected: checkBeforeSending({ size: 0 }) })).toBe("empty.gpx: This file is empty.");
    expect(outcomeAnnouncement({ ...none, file, sendError: new UploadSendError(400, "unsupported_file_type", "x") })).toMatch(/^run\.gpx: This is not a FIT, GPX or TCX file/);
    expect(outcomeAnnouncement({ ...none, file, sendError: new TypeError("Failed to fetch") })).toMatch(/^run\.gpx: The file could not be sent/);
    const done = { status: "succeeded" as const, error: null, activity_id: "act_1", activity_ids: ["act_1"] };
    expect(outcomeAnnouncement({ ...none, file, accepted: done })).toBe("run.gpx: uploaded, its activity is ready.");
    expect(outcomeAnnouncement({ ...none, file, accepted: { ...done, activity_ids: ["act_1", "act_2", "act_3"] } })).toBe("run.gpx: uploaded, 3 activities are ready.");
    const dup = { status: "failed" as const, error: { code: "duplicate_activity" as const, detail: "x" }, activity_id: "act_1", activity_ids: [] };
    expect(outcomeAnnouncement({ ...none, file, accepted: dup })).toBe("run.gpx: You already uploaded this file.");
  });
});

describe("a duplicate of a multisport file", () => {
  // The first upload made three activities (one per session); the service names the first of them on the duplicate.
  const original = { status: "succeeded" as const, error: null, activity_id: "act_swim", activity_ids: ["act_swim", "act_bike", "act_run"] };
  const dup = { status: "failed" as const, error: { code: "duplicate_activity" as const, detail: "x" }, activity_id: "act_swim", activity_ids: [] };

  it("names every activity the file made where the queue holds the first upload, and says how many", () => {
    const known = activitiesOfUpload(dup, [dup, original]);
    expect(known).toEqual({ ids: ["act_swim", "act_bike", "act_run"], complete: true });
    expect(duplicateLead(known)).toBe("Its 3 activities:");
  });

  it("does not call the one activity the service names the file's only one when the rest are not known", () => {
    const named = activitiesOfUpload(dup, [dup]);
    expect(named).toEqual({ ids: ["act_swim"], complete: false });
    expect(duplicateLead(named)).not.toMatch(/^Its activity/);
  });

  it("says \"its activity\" for a file known to have made one", () => {
    const single = { ...original, activity_id: "act_1", activity_ids: ["act_1"] };
    const known = activitiesOfUpload({ ...dup, activity_id: "act_1" }, [single]);
    expect(duplicateLead(known)).toBe("Its activity:");
  });

  it("names what an upload made, and nothing for other failures", () => {
    expect(activitiesOfUpload(original, [])).toEqual({ ids: original.activity_ids, complete: true });
    expect(activitiesOfUpload({ status: "failed", error: { code: "invalid_file", detail: "x" }, activity_id: null, activity_ids: [] }, [original]).ids).toEqual([]);
  });
});

describe("an upload row's mention of an activity deleted since", () => {
  it("links to an activity that exists", () => {
    expect(activityMention({ id: "act_1", name: "Friday Evening Run", deleted: false })).toEqual({ text: "Friday Evening Run", href: "/activities/act_1" });
    expect(activityMention({ id: "act_1", name: null, deleted: false })).toEqual({ text: "…", href: "/activities/act_1" });
  });

  it("says it was deleted, and offers no link to its page", () => {
    expect(activityMention({ id: "act_1", name: "Friday Evening Run", deleted: true })).toEqual({ text: "Friday Evening Run (deleted)", href: null });
    expect(activityMention({ id: "act_1", name: null, deleted: true })).toEqual({ text: "an activity (deleted)", href: null });
  });
});

describe("describeCheckProblem: why a row could not learn how its upload went", () => {
  it("says in words that the person is signed out (not only \"Not loaded.\"), and stops asking", () => {
    const p = describeCheckProblem(new ConsoleApiError("Not loaded.", 401, "token_missing"));
    expect(p.final).toBe(true);
    expect(p.text).toBe("Could not learn how the upload went: you are no longer signed in. The file was received; once you are signed in again, check again.");
    // The banner alone says the session has ended, once for the page.
    expect(p.text).not.toMatch(/session has ended/i);
  });

  it("keeps asking after a 429 or a 503, once its Retry-After is over, and says so", () => {
    expect(describeCheckProblem(new ConsoleApiError("The console's limit is used up; retry in 3 s.", 429, "rate_limited", {}, 3000))).toEqual({
      text: "Could not learn how the upload went yet: the service was asked too often. Asking again in 3 s.",
      final: false,
    });
    expect(describeCheckProblem(new ConsoleApiError("The database cannot be reached.", 503, "unavailable", {}, 1500))).toEqual({
      text: "Could not learn how the upload went yet: the service is busy. Asking again in 2 s.",
      final: false,
    });
  });

  it("stops at another 4xx (the upload gone) and goes on after no answer or a 5xx, with the error's own words", () => {
    expect(describeCheckProblem(new ConsoleApiError("No upload upl_1.", 404, "not_found"))).toEqual({ text: "Could not learn how the upload went: No upload upl_1.", final: true });
    expect(describeCheckProblem(new ConsoleApiError("The service could not be reached. Check your connection and try again.", 0)).final).toBe(false);
    expect(describeCheckProblem(new ConsoleApiError("The service answered with an error (500). Try again in a moment.", 500)).final).toBe(false);
  });
});

describe("a file sent again while its first send is still being taken", () => {
  it("is said in words and offered again (409 idempotency_key_in_use), not refused for good", () => {
    const p = describeSendFailure(409, "idempotency_key_in_use", "A request with this Idempotency-Key is still in progress.");
    expect(p.retryable).toBe(true);
    expect(p.headline).toBe("This file is still being received from an earlier try. Wait a moment and try again.");
    expect(describeSendFailure(409, "conflict", "x").retryable).toBe(false);
  });
});
