"use client";

import { useCallback, useRef } from "react";

/**
 * The rows of a list that the focus can be sent to by id: where an action's button goes away
 * (a token's or app's "Done", a revoked token, a webhook secret's "Done"), the keyboard goes on
 * from the row it was about. Give each row `ref={rowRef(id)}`, `tabIndex={-1}` and a name;
 * `focusRow(id)` does nothing for a row not (yet) in the list.
 */
export function useFocusableRows() {
  const rows = useRef(new Map<string, HTMLLIElement>());
  const rowRef = useCallback(
    (id: string) => (el: HTMLLIElement | null) => {
      if (el) rows.current.set(id, el);
      else rows.current.delete(id);
    },
    [],
  );
  const focusRow = useCallback((id: string) => rows.current.get(id)?.focus(), []);
  return { rowRef, focusRow };
}

/** The classes of such a row's focus: no outline of its own, a ring when the keyboard is on it. */
export const FOCUSABLE_ROW = "outline-none focus-visible:ring-2 focus-visible:ring-brand-500";
