"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Notice } from "@/components/ui/notice";
import { consolePaths, EXPORT_FORMATS } from "./files-api";
import { activitiesChanged, activityKey } from "./query-keys";

/** "Download": the original file, or FIT, GPX or TCX made from the streams; plain links, so the browser downloads. */
export function DownloadMenu({ activityId }: { activityId: string }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const away = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    const esc = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener("pointerdown", away);
    document.addEventListener("keydown", esc);
    return () => {
      document.removeEventListener("pointerdown", away);
      document.removeEventListener("keydown", esc);
    };
  }, [open]);

  return (
    <div ref={root} className="relative">
      <Button ref={button} variant="secondary" aria-expanded={open} aria-controls={menuId} onClick={() => setOpen((o) => !o)}>
        Download
        <svg aria-hidden width="10" height="10" viewBox="0 0 10 10" className={open ? "rotate-180" : ""}>
          <path d="M1 3l4 4 4-4" fill="none" stroke="currentColor" strokeWidth="1.5" />
        </svg>
      </Button>
      <ul
        id={menuId}
        hidden={!open}
        aria-label="Download formats"
        className="absolute right-0 z-10 mt-1 w-48 rounded-md border border-slate-200 bg-white py-1 text-sm shadow-lg"
      >
        {EXPORT_FORMATS.map((f) => (
          <li key={f.format}>
            <a
              href={consolePaths.export(activityId, f.format)}
              download
              onClick={() => setOpen(false)}
              className="block px-3 py-2 text-slate-800 hover:bg-slate-100 focus:bg-slate-100 focus:outline-none"
            >
              {f.label}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** "Delete", asked once more in a dialog; afterwards the athlete is back on the list. */
export function DeleteActivity({ activityId, name }: { activityId: string; name: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const router = useRouter();
  const qc = useQueryClient();

  const remove = useMutation({
    mutationFn: () => consoleFetch<null>(consolePaths.activity(activityId), { method: "DELETE" }),
    onSuccess: () => {
      dialog.current?.close();
      qc.removeQueries({ queryKey: activityKey(activityId) });
      activitiesChanged(qc);
      router.push("/activities");
    },
  });

  return (
    <>
      <Button
        variant="danger"
        onClick={() => {
          remove.reset();
          dialog.current?.showModal();
        }}
      >
        Delete
      </Button>
      <dialog
        ref={dialog}
        aria-labelledby={titleId}
        className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg border border-slate-200 p-0 shadow-xl backdrop:bg-slate-900/50"
      >
        <div className="space-y-3 p-5">
          <h2 id={titleId} className="text-lg font-semibold text-slate-900">
            Delete this activity?
          </h2>
          <p className="text-sm text-slate-700">
            “{name}” goes for good, with its samples, laps and uploaded file. Apps you connected are told it was deleted.
          </p>
          {remove.error && <Notice tone="error">{remove.error.message}</Notice>}
          <div className="flex justify-end gap-2 pt-2">
            <Button variant="secondary" autoFocus onClick={() => dialog.current?.close()} disabled={remove.isPending}>
              Cancel
            </Button>
            <Button variant="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>
              {remove.isPending ? "Deleting…" : "Delete activity"}
            </Button>
          </div>
        </div>
      </dialog>
    </>
  );
}
