"use client";

import { useEffect, useRef, useState, type ComponentProps } from "react";
import { Notice } from "./notice";

/**
 * A notice that takes the focus when it appears: for the outcome of an action whose button went
 * away with it (a disconnected app, a deleted endpoint or activity), so that the keyboard and a
 * screen reader go on from what happened instead of from the top of the page. Give it a `key`
 * per outcome so that a new one is focused too.
 */
export function FocusedNotice(props: ComponentProps<typeof Notice>) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <div ref={ref} tabIndex={-1} className="outline-none">
      <Notice {...props} />
    </div>
  );
}

/**
 * The outcome a FocusedNotice says, numbered so that each one is a new notice (its `key`) and
 * takes the focus, the same words twice too. `say(null)` clears it.
 */
export function useOutcome(): [{ id: number; text: string } | null, (text: string | null) => void] {
  const [outcome, setOutcome] = useState<{ id: number; text: string } | null>(null);
  return [outcome, (text) => setOutcome((o) => (text === null ? null : { id: (o?.id ?? 0) + 1, text }))];
}
