"use client";

import { useCallback, useRef } from "react";

/**
 * Runs an action unless one started through the same guard is still running. A button's
 * `disabled` (aria-disabled, button.tsx) takes effect only once React renders again, so two
 * clicks in the same instant (a fast double click, a script's clicks) would both start it: a
 * rotation twice over, whose first secret then no longer verifies anything. The ref is set at
 * once, before any render.
 */
export function useOneAtATime(): (action: () => Promise<unknown>) => void {
  const running = useRef(false);
  return useCallback((action) => {
    if (running.current) return;
    running.current = true;
    // A refusal is the mutation's to show (its error); here it only ends the run.
    void action()
      .catch(() => {})
      .finally(() => {
        running.current = false;
      });
  }, []);
}
