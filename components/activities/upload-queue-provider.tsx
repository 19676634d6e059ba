"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { UploadWire } from "./files-api";
import { sendUpload } from "./send-upload";
import { nonce } from "@/components/console/submission-key";
import { mayStartSending, type Phase } from "./upload-queue";
import { checkBeforeSending, type UploadProblem } from "./upload-outcome";

// Files go out a few at a time: a folder of fifty runs should not open fifty connections.
const PARALLEL_SENDS = 3;
// More than a season of files in one drop is more likely a mistake (the wrong folder).
export const MAX_FILES_AT_ONCE = 100;

export type UploadItem = {
  key: string;
  /** The `Idempotency-Key` it is sent under, again when it is retried (send-upload.ts). */
  idempotencyKey: string;
  /** Counts up in the order files were picked, within one pick too: they are sent in this order. */
  seq: number;
  file: File;
  phase: Phase;
  /** Refused before sending (size, kind), with the words to show. */
  rejected: UploadProblem | null;
  /** How much of the body has gone out, 0 to 1. */
  progress: number;
  /** The service's last word on the file: its 202 answer, then the outcome once processed. */
  accepted: UploadWire | null;
  /** Why sending failed (an `UploadSendError`, or anything the browser threw). */
  sendError: unknown;
};

type UploadQueue = {
  items: readonly UploadItem[];
  /** Takes the files picked or dropped (the first `MAX_FILES_AT_ONCE`); answers how many were left out. */
  add: (files: FileList | File[]) => number;
  /** The file was processed: keeps the outcome, so the panel shows it again however long the athlete was away. */
  finish: (key: string, outcome: UploadWire) => void;
  /** Puts a file whose sending failed back in the queue. */
  retry: (key: string) => void;
  clearFinished: () => void;
  /** Activities deleted in this console, by id, with their names: rows that made them say so instead of linking to them. */
  deleted: ReadonlyMap<string, string>;
  /** An activity was deleted (on its page): the rows naming it stop offering it. */
  activityDeleted: (id: string, name: string) => void;
};

const Context = createContext<UploadQueue | null>(null);

/**
 * The files an athlete picked and where each one is, kept by the console's layout rather than
 * by the upload panel: the layout stays mounted while the athlete moves between console pages,
 * so opening a finished file's activity does not drop the files still waiting or cut off the
 * ones sending, and coming back shows them all. Leaving the console (closing the tab, signing
 * out) with files not yet sent asks first.
 */
export function UploadQueueProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const [deleted, setDeleted] = useState<ReadonlyMap<string, string>>(new Map());
  const nextKey = useRef(0);
  const started = useRef(new Set<string>());

  const update = useCallback((key: string, change: Partial<UploadItem>) => {
    setItems((prev) => prev.map((i) => (i.key === key ? { ...i, ...change } : i)));
  }, []);

  const add = useCallback((files: FileList | File[]) => {
    const list = Array.from(files);
    const taken = list.slice(0, MAX_FILES_AT_ONCE);
    if (taken.length > 0) {
      setItems((prev) => [
        ...taken.map((file): UploadItem => {
          const rejected = checkBeforeSending(file);
          const seq = nextKey.current++;
          return { key: `u${seq}`, idempotencyKey: `upload.${nonce()}`, seq, file, phase: rejected ? "finished" : "queued", rejected, progress: 0, accepted: null, sendError: null };
        }),
        ...prev,
      ]);
    }
    return list.length - taken.length;
  }, []);

  const finish = useCallback((key: string, outcome: UploadWire) => update(key, { phase: "finished", accepted: outcome }), [update]);

  const retry = useCallback(
    (key: string) => {
      started.current.delete(key);
      update(key, { phase: "queued", progress: 0, sendError: null });
    },
    [update],
  );

  const clearFinished = useCallback(() => setItems((prev) => prev.filter((i) => i.phase !== "finished")), []);

  const activityDeleted = useCallback((id: string, name: string) => setDeleted((prev) => new Map(prev).set(id, name)), []);

  // Sends the queued files in the order they were picked while fewer than PARALLEL_SENDS are on their way.
  useEffect(() => {
    for (const key of mayStartSending(
      items.map((i) => ({ key: i.key, phase: i.phase, seq: i.seq })),
      PARALLEL_SENDS,
    )) {
      if (started.current.has(key)) continue;
      const item = items.find((i) => i.key === key)!;
      started.current.add(key);
      update(key, { phase: "sending" });
      sendUpload(item.file, item.idempotencyKey, (progress) => update(key, { progress })).then(
        (accepted) => update(key, { phase: "sent", progress: 1, accepted }),
        (sendError: unknown) => update(key, { phase: "finished", sendError }),
      );
    }
  }, [items, update]);

  // Closing or reloading the page would lose the files not yet sent: the browser asks first.
  const unsent = items.some((i) => i.phase === "queued" || i.phase === "sending");
  useEffect(() => {
    if (!unsent) return;
    const ask = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", ask);
    return () => window.removeEventListener("beforeunload", ask);
  }, [unsent]);

  const value = useMemo(
    () => ({ items, add, finish, retry, clearFinished, deleted, activityDeleted }),
    [items, add, finish, retry, clearFinished, deleted, activityDeleted],
  );
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useUploadQueue(): UploadQueue {
  const queue = useContext(Context);
  if (!queue) throw new Error("useUploadQueue needs an UploadQueueProvider (the console layout has one).");
  return queue;
}
