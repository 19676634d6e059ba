"use client";

import Link from "next/link";
import { useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useId, useRef, useState, type DragEvent, type RefObject } from "react";
import { ConsoleApiError, consoleFetch, isClientError, retryAfterOf } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { Notice } from "@/components/ui/notice";
import { ProgressBar } from "@/components/ui/progress-bar";
import type { ActivityWire } from "@/lib/activities/schemas";
import { consolePaths, type UploadWire } from "./files-api";
import { activitiesChanged, activityKey, uploadKey } from "./query-keys";
import { mayPoll } from "./upload-queue";
import { MAX_FILES_AT_ONCE, useUploadQueue, type UploadItem } from "./upload-queue-provider";
import {
  activitiesOfUpload,
  activityMention,
  describeCheckProblem,
  describeUploadError,
  duplicateLead,
  outcomeAnnouncement,
  sendProblemOf,
  type UploadProblem,
} from "./upload-outcome";

// Processing takes seconds; asking about twice a second shows the outcome as soon as it exists.
const POLL_MS = 750;
// Outcomes asked for at once: the oldest files processing (upload-queue.ts, `mayPoll`).
const PARALLEL_POLLS = 2;

/** "Upload files": pick or drop FIT, GPX and TCX files; each shows its progress, then its activity or what went wrong. */
export function UploadPanel() {
  // The files themselves are the console layout's (upload-queue-provider.tsx): they keep going while the athlete looks elsewhere.
  const { items, add: addToQueue, finish, retry, clearFinished } = useUploadQueue();
  const [dragging, setDragging] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const uploadButton = useRef<HTMLButtonElement>(null);
  const hintId = useId();
  const live = useOutcomeAnnouncement(items);
  // The rows sent whose outcome is no longer asked for (their last ask was answered with a 4xx):
  // they give up their place among those asked about (`mayPoll`).
  const [stopped, setStopped] = useState<ReadonlySet<string>>(() => new Set());
  const onStopped = useCallback((key: string, now: boolean) => {
    setStopped((prev) => {
      if (prev.has(key) === now) return prev;
      const next = new Set(prev);
      if (now) next.add(key);
      else next.delete(key);
      return next;
    });
  }, []);

  const add = (files: FileList | File[]) => {
    if (files.length === 0) return;
    const left = addToQueue(files);
    setNotice(left > 0 ? `Only the first ${MAX_FILES_AT_ONCE} files were taken; drop the rest afterwards.` : null);
  };

  // Files chosen before the page's script ran (a slow connection; the input is named for a
  // screen reader's browse mode, which can reach it first) fired their change event before
  // React listened, and would be left in the input unsent: they are taken now.
  useEffect(() => {
    const el = input.current;
    if (el?.files?.length) {
      add(el.files);
      el.value = "";
    }
    // Once, as the panel first appears.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // A file dropped beside the zone would make the browser leave the page to show it.
  useEffect(() => {
    const hasFiles = (e: globalThis.DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes("Files");
    const stop = (e: globalThis.DragEvent) => {
      if (hasFiles(e)) e.preventDefault();
    };
    window.addEventListener("dragover", stop);
    window.addEventListener("drop", stop);
    return () => {
      window.removeEventListener("dragover", stop);
      window.removeEventListener("drop", stop);
    };
  }, []);

  const polling = mayPoll(
    items.map((i) => ({ key: i.key, phase: i.phase, seq: i.seq, stopped: stopped.has(i.key) })),
    PARALLEL_POLLS,
  );

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    setDragging(false);
    add(e.dataTransfer.files);
  };

  return (
    <Card title="Add activities from files">
      <div
        data-testid="upload-drop-zone"
        onDragEnter={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragOver={(e) => {
          e.preventDefault();
          e.dataTransfer.dropEffect = "copy";
          setDragging(true);
        }}
        onDragLeave={(e) => {
          if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={onDrop}
        className={`flex flex-col items-center gap-3 rounded-lg border-2 border-dashed px-4 py-4 text-center transition-colors sm:flex-row sm:justify-between sm:text-left ${
          dragging ? "border-brand-600 bg-brand-50" : "border-slate-300 bg-slate-50"
        }`}
      >
        <div className="space-y-1">
          <p id={hintId} className="text-sm text-slate-800">
            Drop FIT, GPX or TCX files here (gzip-compressed too), several at once.
          </p>
          <p className="text-xs text-slate-600">Up to 25 MiB a file. Each becomes an activity with its route, samples and laps.</p>
        </div>
        <Button ref={uploadButton} type="button" className="shrink-0" onClick={() => input.current?.click()} aria-describedby={hintId}>
          Upload files
        </Button>
        {/* Out of the tab order ("Upload files" opens it), but named: a screen reader's browse mode or a
            script finds it by its label. Not "Upload files", which names the button alone. */}
        <input
          ref={input}
          type="file"
          multiple
          accept=".fit,.gpx,.tcx,.gz,application/gzip,application/gpx+xml,application/vnd.garmin.tcx+xml,application/vnd.ant.fit"
          className="sr-only"
          tabIndex={-1}
          aria-label="Choose files"
          aria-describedby={hintId}
          onChange={(e) => {
            if (e.target.files) add(e.target.files);
            // The same file picked again after a failure must fire change again.
            e.target.value = "";
          }}
        />
      </div>

      {/* Each file's outcome is said here, in a region that is there before anything is put in it:
          a live region added with its message already inside (a row refused before sending) is
          not read by most screen readers. */}
      <p ref={live} aria-live="polite" className="sr-only" />

      {notice && (
        <div className="mt-3">
          <Notice tone="warning">{notice}</Notice>
        </div>
      )}

      {items.length > 0 && (
        <>
          <ul aria-label="Uploads" className="mt-4 divide-y divide-slate-100">
            {items.map((i) => (
              <UploadRow key={i.key} item={i} mayAsk={polling.has(i.key)} onFinish={finish} onRetry={retry} onStopped={onStopped} />
            ))}
          </ul>
          {items.some((i) => i.phase === "finished") && (
            <div className="mt-3 flex justify-end">
              <Button
                variant="ghost"
                onClick={() => {
                  clearFinished();
                  // The button goes with the rows it cleared: the keyboard goes on from where files are added.
                  uploadButton.current?.focus();
                }}
              >
                Clear finished
              </Button>
            </div>
          )}
        </>
      )}
    </Card>
  );
}

function UploadRow({
  item,
  mayAsk,
  onFinish,
  onRetry,
  onStopped,
}: {
  item: UploadItem;
  mayAsk: boolean;
  onFinish: (key: string, outcome: UploadWire) => void;
  onRetry: (key: string) => void;
  /** Whether the row stopped asking how its upload went (`describeCheckProblem`'s `final`). */
  onStopped: (key: string, stopped: boolean) => void;
}) {
  const qc = useQueryClient();
  const { items, deleted } = useUploadQueue();
  const rowRef = useRef<HTMLLIElement>(null);
  const { key, file, progress, accepted } = item;

  const upload = useQuery({
    queryKey: uploadKey(accepted?.id ?? ""),
    queryFn: () => consoleFetch<UploadWire>(consolePaths.upload(accepted!.id)),
    enabled: !!accepted,
    initialData: accepted ?? undefined,
    staleTime: 0,
    // A 4xx (the session ended, the upload deleted) would only be answered again: asking stops
    // until the person asks again ("Check again"). A 429 or a 503 is asked again once its
    // Retry-After is over (at most a minute), not sooner.
    refetchInterval: (q) => {
      if (!mayAsk || q.state.data?.status !== "processing" || isClientError(q.state.error)) return false;
      return Math.max(POLL_MS, retryAfterOf(q.state.error) ?? 0);
    },
    retryDelay: (failures, error) => retryAfterOf(error) ?? Math.min(1000 * 2 ** failures, 30_000),
    refetchIntervalInBackground: true,
  });
  // Its turn to be asked about came: ask at once (it may be processed already).
  const { refetch } = upload;
  useEffect(() => {
    if (mayAsk && accepted) void refetch();
  }, [mayAsk, accepted, refetch]);

  const status = upload.data?.status;
  const checkProblem = upload.error ? describeCheckProblem(upload.error) : null;
  // Stopped asking: its place among the files asked about goes to the next one.
  const stopped = !!accepted && status === "processing" && !!checkProblem?.final;
  useEffect(() => {
    onStopped(key, stopped);
  }, [key, stopped, onStopped]);
  const finished = item.phase === "finished";
  useEffect(() => {
    if (finished || !upload.data || upload.data.status === "processing") return;
    if (upload.data.status === "succeeded") activitiesChanged(qc);
    onFinish(key, upload.data);
  }, [finished, upload.data, qc, key, onFinish]);

  // A duplicate names what the earlier upload of the file made, all of it where this queue holds that upload.
  const linked = upload.data ? activitiesOfUpload(upload.data, items.flatMap((i) => (i.accepted ? [i.accepted] : []))) : { ids: [], complete: true };
  const activities = useQueries({
    queries: linked.ids.map((id) => ({
      queryKey: activityKey(id),
      queryFn: () => consoleFetch<ActivityWire>(consolePaths.activity(id)),
      // Deleted in this console: nothing to ask about.
      enabled: !deleted.has(id),
    })),
  });
  // Deleted on its page, or elsewhere (found not there when asked): named, not linked.
  const mentions = linked.ids.map((id, i) => {
    const q = activities[i];
    const notHere = q?.error instanceof ConsoleApiError && q.error.status === 404;
    const name = deleted.get(id) ?? q?.data?.name ?? (q?.isError && !notHere ? "the activity" : null);
    return { id, ...activityMention({ id, name, deleted: deleted.has(id) || notHere }) };
  });

  const sendProblem = sendProblemOf(item);

  let bar: { value: number | null; text: string; tone: "active" | "success" | "error" };
  let state: string;
  if (sendProblem || status === "failed") {
    bar = { value: 1, text: "Failed", tone: "error" };
    state = "Failed";
  } else if (status === "succeeded") {
    bar = { value: 1, text: "Done", tone: "success" };
    state = "Done";
  } else if (accepted && checkProblem?.final) {
    // Sent and taken, but how its processing went cannot be learnt now: not "processing" forever.
    bar = { value: 1, text: "Not known", tone: "error" };
    state = "Not known";
  } else if (accepted) {
    bar = { value: null, text: "Processing", tone: "active" };
    state = "Processing…";
  } else if (item.phase === "sending") {
    const pct = Math.round(progress * 100);
    bar = { value: progress, text: `Sending, ${pct}%`, tone: "active" };
    state = `Sending ${pct}%`;
  } else {
    bar = { value: 0, text: "Waiting to send", tone: "active" };
    state = "Waiting";
  }

  return (
    // Focusable from script only: "Try again" goes away as the file goes back to sending, and the
    // keyboard goes on from its row, which says where the file is now.
    <li ref={rowRef} tabIndex={-1} className="py-3 focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500" data-testid="upload-row">
      <div className="flex items-baseline justify-between gap-3">
        <span className="min-w-0 truncate text-sm font-medium text-slate-900" title={file.name}>
          {file.name}
        </span>
        <span className="shrink-0 text-xs tabular-nums text-slate-600">
          {formatBytes(file.size)} · {state}
        </span>
      </div>
      <div className="mt-2">
        <ProgressBar label={`${file.name} upload progress`} value={bar.value} valueText={bar.text} tone={bar.tone} />
      </div>
      {/* Activity names can be one long word: they wrap rather than widen the page. */}
      <div className="mt-2 text-sm [overflow-wrap:anywhere]">
        {status === "succeeded" && mentions.length > 0 && (
          <p className="text-slate-800">
            {mentions.length === 1 ? "Created " : `Created ${mentions.length} activities: `}
            <Mentions mentions={mentions} />
          </p>
        )}
        {status === "failed" && upload.data && (
          <ProblemText problem={describeUploadError(upload.data)} existing={mentions.length > 0 ? { lead: duplicateLead(linked), mentions } : null} />
        )}
        {sendProblem && (
          <div className="flex flex-wrap items-center gap-3">
            <ProblemText problem={sendProblem} existing={null} />
            {sendProblem.retryable && !item.rejected && (
              <Button
                variant="secondary"
                onClick={() => {
                  rowRef.current?.focus();
                  onRetry(key);
                }}
              >
                Try again
              </Button>
            )}
          </div>
        )}
        {checkProblem && (
          <div className="flex flex-wrap items-center gap-3">
            <p className="text-red-700">{checkProblem.text}</p>
            {checkProblem.final && (
              <Button variant="secondary" onClick={() => void refetch()} disabled={upload.isFetching}>
                Check again
              </Button>
            )}
          </div>
        )}
      </div>
    </li>
  );
}

// Outcomes kept in the live region: enough for those a screen reader has not reached yet.
const KEPT_ANNOUNCEMENTS = 5;

/**
 * The upload list's live region (rendered empty, to hold the returned ref): puts in it the outcomes of the files that
 * finished since it last spoke. Files already finished when the panel appears (the athlete
 * coming back to the page) were said before and are not said again.
 */
function useOutcomeAnnouncement(items: readonly UploadItem[]): RefObject<HTMLParagraphElement | null> {
  const live = useRef<HTMLParagraphElement>(null);
  const [said] = useState(() => new Set(items.filter((i) => i.phase === "finished").map((i) => i.key)));
  useEffect(() => {
    const fresh = items.filter((i) => i.phase === "finished" && !said.has(i.key));
    if (fresh.length === 0) return;
    fresh.forEach((i) => said.add(i.key));
    // Oldest first, as they happened (the list shows the newest first).
    const sentences = fresh.reverse().map(outcomeAnnouncement).filter((w): w is string => w !== null);
    const region = live.current;
    if (sentences.length === 0 || !region) return;
    // Added beside what was said before rather than replacing it, so that an outcome not yet
    // read out when the next one comes is not lost; only the last few are kept.
    const line = document.createElement("span");
    line.textContent = `${sentences.join(" ")} `;
    region.append(line);
    while (region.childElementCount > KEPT_ANNOUNCEMENTS) region.firstElementChild?.remove();
  }, [items, said]);
  return live;
}

type Mention = { id: string } & ReturnType<typeof activityMention>;

/** Activities named in a row, comma-separated: links to those that exist, names alone for those deleted. */
function Mentions({ mentions }: { mentions: Mention[] }) {
  return mentions.map((m, i) => (
    <span key={m.id}>
      {i > 0 && ", "}
      {m.href ? (
        <Link href={m.href} className="font-medium text-brand-700 underline hover:text-brand-600">
          {m.text}
        </Link>
      ) : (
        <span className="text-slate-700">{m.text}</span>
      )}
    </span>
  ));
}

function ProblemText({ problem, existing }: { problem: UploadProblem; existing: { lead: string; mentions: Mention[] } | null }) {
  return (
    <div className="text-red-800">
      <p>
        {problem.headline}
        {problem.existingActivityId && existing && (
          <>
            {" "}
            {existing.lead} <Mentions mentions={existing.mentions} />.
          </>
        )}
      </p>
      {problem.detail && <p className="mt-0.5 text-xs text-slate-700">{problem.detail}</p>}
    </div>
  );
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}
