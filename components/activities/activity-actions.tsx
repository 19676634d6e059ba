"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState } from "react";
import { ConsoleApiError, UNREACHABLE, consoleFetch, consoleRequest, problemOf } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Notice } from "@/components/ui/notice";
import { describeDownloadProblem, downloadFoundItGone } from "./activity-problems";
import { consolePaths, EXPORT_FORMATS, fileNameFromDisposition } from "./files-api";
import { activitiesChanged, activityGone, activityKey, DELETED_NOTICE_KEY } from "./query-keys";
import { useUploadQueue } from "./upload-queue-provider";

/**
 * "Download": the original file, or FIT, GPX or TCX made from the streams. The items stay links
 * (keyboard, middle-click and "Save link as" work as usual), but a plain click fetches the file
 * first, so a refusal (the activity deleted in another tab, a session that ended, a rate limit)
 * is said on the page instead of being saved as a file or shown as nothing. GPX is a track of
 * positions: it is not offered for an activity that recorded none (`gpx` false: its streams have
 * no `latlng`), which the service would refuse.
 */
export function DownloadMenu({ activityId, gpx = true }: { activityId: string; gpx?: boolean }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  // Kept apart from the mutation's error so that dismissing it never resets a download under way.
  const [problem, setProblem] = useState<string | null>(null);
  // The refusal was the activity's absence (deleted elsewhere): once it has been read and put
  // away, the page learns it too.
  const [gone, setGone] = useState(false);
  const qc = useQueryClient();

  const download = useMutation({
    mutationFn: async (format: (typeof EXPORT_FORMATS)[number]["format"]) => {
      const res = await consoleRequest(consolePaths.export(activityId, format));
      if (!res.ok) throw await problemOf(res);
      // The body can still be cut off after an ok status line.
      const blob = await res.blob().catch(() => {
        throw new ConsoleApiError(UNREACHABLE, 0);
      });
      saveFile(blob, fileNameFromDisposition(res.headers.get("content-disposition")) ?? `${activityId}${format === "original" ? "" : `.${format}`}`);
    },
    onMutate: () => setProblem(null),
    onError: (e, format) => {
      setProblem(describeDownloadProblem(e, format));
      setGone(downloadFoundItGone(e, format));
    },
  });

  // The menu, and a refusal under the button, go away on a click elsewhere or Escape; the menu
  // also when the keyboard's focus leaves it (Tab past its last item).
  const shown = open || problem !== null;
  useEffect(() => {
    if (!shown) return;
    const dismiss = () => {
      setOpen(false);
      setProblem(null);
      if (gone) activityGone(qc, activityId);
    };
    const away = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) dismiss();
    };
    const esc = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        dismiss();
        button.current?.focus();
      }
    };
    const focusAway = (e: FocusEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", away);
    document.addEventListener("keydown", esc);
    document.addEventListener("focusin", focusAway);
    return () => {
      document.removeEventListener("pointerdown", away);
      document.removeEventListener("keydown", esc);
      document.removeEventListener("focusin", focusAway);
    };
  }, [shown, gone, qc, activityId]);

  return (
    <div ref={root} className="sm:relative">
      <div className="relative">
        <Button
          ref={button}
          variant="secondary"
          aria-expanded={open}
          aria-controls={menuId}
          aria-busy={download.isPending}
          onClick={() => {
            setProblem(null);
            setOpen((o) => !o);
          }}
        >
          Download
          {download.isPending ? (
            <svg aria-hidden width="10" height="10" viewBox="0 0 10 10" className="animate-spin">
              <path d="M5 1a4 4 0 1 1-4 4" fill="none" stroke="currentColor" strokeWidth="1.5" />
            </svg>
          ) : (
            <svg aria-hidden width="10" height="10" viewBox="0 0 10 10" className={open ? "rotate-180" : ""}>
              <path d="M1 3l4 4 4-4" fill="none" stroke="currentColor" strokeWidth="1.5" />
            </svg>
          )}
        </Button>
        <ul
          id={menuId}
          hidden={!open}
          aria-label="Download formats"
          className="absolute right-0 z-10 mt-1 w-48 rounded-md border border-slate-200 bg-white py-1 text-sm shadow-lg"
        >
          {EXPORT_FORMATS.filter((f) => gpx || f.format !== "gpx").map((f) => (
            <li key={f.format}>
              <a
                href={consolePaths.export(activityId, f.format)}
                download
                aria-disabled={download.isPending || undefined}
                onClick={(e) => {
                  // Ctrl-, Cmd-, Shift- and Alt-clicks keep the browser's own meaning (new tab, window, save).
                  if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
                  e.preventDefault();
                  setOpen(false);
                  // The item is about to be hidden: the button keeps the focus, as after Escape.
                  button.current?.focus();
                  if (!download.isPending) download.mutate(f.format);
                }}
                className="block px-3 py-2 text-slate-800 hover:bg-slate-100 focus:bg-slate-100 focus:outline-none focus-visible:ring-2 focus-visible:ring-inset focus-visible:ring-brand-500 aria-disabled:text-slate-400"
              >
                {f.label}
              </a>
            </li>
          ))}
        </ul>
      </div>
      {problem && (
        // Under the button, right-aligned, from a small screen up; on a phone the button may sit
        // anywhere in its row, so the notice spans the screen less its margins (this wrapper is
        // not positioned there) rather than hanging off its left edge.
        <div className="absolute inset-x-4 z-10 mt-1 sm:inset-x-auto sm:right-0 sm:w-72">
          <Notice tone="error">{problem}</Notice>
        </div>
      )}
    </div>
  );
}

/** Hands bytes already fetched to the browser's downloads, under `fileName`. */
function saveFile(blob: Blob, fileName: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  // Not at once: Firefox may still be reading the blob for a large file when click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 40_000);
}

/**
 * "Delete": on one click; afterwards the athlete is back on the list, which says what was
 * deleted. `fromFile`: the activity came from an uploaded file, so its samples and laps go with
 * it. The file itself goes only with the last activity made from it (a multisport file makes
 * several), which the answer does not tell, so the words do not claim it.
 */
export function DeleteActivity({ activityId, name, fromFile }: { activityId: string; name: string; fromFile: boolean }) {
  const router = useRouter();
  const qc = useQueryClient();
  const { activityDeleted } = useUploadQueue();

  /**
   * Back to the list, which says what happened (the notice is handed over in the query cache),
   * refreshed, and whose upload rows no longer offer the activity.
   */
  const gone = (notice: string) => {
    qc.removeQueries({ queryKey: activityKey(activityId) });
    activityDeleted(activityId, name);
    activitiesChanged(qc);
    qc.setQueryData(DELETED_NOTICE_KEY, notice);
    router.push("/activities");
  };
  // One click, with no confirm dialog: CONTRACT §11 names "Delete" as the action, as §9 names
  // "Revoke" and "Disconnect", and a journey clicking it by name must see it done. The list then
  // says what was deleted.
  const remove = useMutation({
    mutationFn: () => consoleFetch<null>(consolePaths.activity(activityId), { method: "DELETE" }),
    onSuccess: () => gone(fromFile ? `Deleted “${name}”, with its samples and laps.` : `Deleted “${name}”.`),
    // Deleted meanwhile (another tab): what the person wanted is done.
    onError: (e) => {
      if (e instanceof ConsoleApiError && e.status === 404) gone(`“${name}” was already deleted.`);
    },
  });
  const problem = remove.error && !(remove.error instanceof ConsoleApiError && remove.error.status === 404) ? remove.error.message : null;

  return (
    <span className="inline-flex flex-col items-end gap-2">
      <Button variant="danger" onClick={() => remove.mutate()} disabled={remove.isPending || remove.isSuccess}>
        {remove.isPending ? "Deleting…" : "Delete"}
      </Button>
      {problem && <Notice tone="error">Could not delete it: {problem}</Notice>}
    </span>
  );
}
