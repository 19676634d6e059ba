"use client";

import { useEffect, useRef } from "react";

/**
 * For a form that opens in place of the button that opened it ("Register app", "Edit"): when
 * the form is cancelled, the focus goes back to that button, which comes back in its place (it
 * would otherwise fall to the page's top). Give the button `ref={openerRef}` and the form
 * `onCancel={cancel}`, which hides it with `hide`. Other ways out (a saved form) move the focus
 * themselves.
 */
export function useFocusBackOnCancel<T extends HTMLElement>(shown: boolean, hide: () => void) {
  const openerRef = useRef<T>(null);
  const cancelled = useRef(false);
  useEffect(() => {
    if (shown || !cancelled.current) return;
    cancelled.current = false;
    openerRef.current?.focus();
  }, [shown]);
  return {
    openerRef,
    cancel: () => {
      cancelled.current = true;
      hide();
    },
  };
}
