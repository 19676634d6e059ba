import { consolePaths, type UploadWire } from "./files-api";
import { consoleHeaders, sessionEnded } from "@/components/console/api";

/** The upload request was answered with an error, or never answered (`status` 0). */
export class UploadSendError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly detail: string | undefined,
  ) {
    super(detail ?? `Upload failed (${status})`);
    this.name = "UploadSendError";
  }
}

/**
 * POSTs one file as multipart/form-data. XMLHttpRequest, not fetch: fetch cannot report how
 * much of a request body has gone out, and the progress bar shows exactly that. `idempotencyKey`
 * is the file's own, the same when it is sent again: an upload whose answer never came (a
 * dropped connection) is answered as it was made, not made twice.
 */
export function sendUpload(file: File, idempotencyKey: string, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<UploadWire> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", consolePaths.uploads);
    for (const [name, value] of Object.entries(consoleHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader("Idempotency-Key", idempotencyKey);
    xhr.responseType = "text";
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(Math.min(1, e.loaded / e.total));
    };
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        // A proxy's HTML error page: the status alone says enough.
      }
      if (xhr.status >= 200 && xhr.status < 300 && body && typeof body === "object") {
        onProgress(1);
        resolve(body as UploadWire);
        return;
      }
      const p = (body ?? {}) as { code?: string; detail?: string };
      // A 429 with the console's 401 challenge: refused for having no session, as a 401 is.
      const ended = xhr.status === 401 || (xhr.status === 429 && xhr.getResponseHeader("www-authenticate")?.startsWith("Session"));
      if (ended) sessionEnded();
      reject(new UploadSendError(ended ? 401 : xhr.status, p.code, p.detail));
    };
    xhr.onerror = () => reject(new UploadSendError(0, undefined, undefined));
    xhr.onabort = () => reject(new UploadSendError(0, "aborted", "The upload was cancelled."));
    signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}
