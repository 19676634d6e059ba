"use client";

import { useEffect, useRef } from "react";

/**
 * For a form that opens in place of the button that opened it ("Register app", "Edit", "Record
 * activity"): when the form closes through `close` (cancelled, or a way out after which the
 * keyboard should go on from that button too, such as a saved activity), the focus goes back
 * to that button, which comes back in its place (it would otherwise fall to the page's top).
 * Give the button `ref={openerRef}` and the form `onCancel={close}`, which hides it with `hide`.
 * Other ways out (a saved form whose outcome is a focused notice) move the focus themselves.
 */
export function useFocusBack<T extends HTMLElement>(shown: boolean, hide: () => void) {
  const openerRef = useRef<T>(null);
  const closing = useRef(false);
  useEffect(() => {
    if (shown || !closing.current) return;
    closing.current = false;
    openerRef.current?.focus();
  }, [shown]);
  const close = () => {
    closing.current = true;
    hide();
  };
  return { openerRef, close };
}
