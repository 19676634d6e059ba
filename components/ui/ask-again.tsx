"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";
import { Button } from "./button";
import { FocusedNotice } from "./focused-notice";

/**
 * A destructive action asked once more in words on the page, not in a `window.confirm()` dialog
 * (which a script or an assistive tool that does not answer dialogs cannot get past, and which
 * says nothing of what goes with it): the opener's button, then the question with the action
 * named in full and Cancel. The question takes the focus; Cancel gives it back to the opener.
 * `busy` holds both buttons while the request runs and after it succeeded (the page moves on).
 */
export function AskAgain({
  opener,
  question,
  confirm,
  groupLabel,
  busy,
  error,
  onConfirm,
  onReset,
  className = "",
}: {
  /** The first button's words ("Delete team"). */
  opener: string;
  /** What goes with the action, in words. */
  question: ReactNode;
  /** The second button's words, naming what is acted on ("Delete Harbor Runners"). */
  confirm: string;
  groupLabel: string;
  busy: boolean;
  /** The failed attempt's words, shown under the question. */
  error?: ReactNode;
  onConfirm: () => void;
  /** Clears an earlier attempt's outcome: called on opening the question and on Cancel. */
  onReset?: () => void;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  const openerRef = useRef<HTMLButtonElement>(null);
  const cancelled = useRef(false);
  useEffect(() => {
    if (!asking && cancelled.current) {
      cancelled.current = false;
      openerRef.current?.focus();
    }
  }, [asking]);
  if (!asking) {
    return (
      <div className={className}>
        <Button
          ref={openerRef}
          variant="danger"
          onClick={() => {
            onReset?.();
            setAsking(true);
          }}
        >
          {opener}
        </Button>
      </div>
    );
  }
  return (
    <div className={`space-y-3 [overflow-wrap:anywhere] ${className}`} role="group" aria-label={groupLabel}>
      <FocusedNotice tone="warning">{question}</FocusedNotice>
      {error}
      <div className="flex flex-wrap gap-2">
        {/* The name in it may be one long word: it wraps rather than widening the page. */}
        <Button variant="danger" className="max-w-full" disabled={busy} onClick={onConfirm}>
          {confirm}
        </Button>
        <Button
          variant="secondary"
          disabled={busy}
          onClick={() => {
            cancelled.current = true;
            onReset?.();
            setAsking(false);
          }}
        >
          Cancel
        </Button>
      </div>
    </div>
  );
}
