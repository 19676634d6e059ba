"use client";

import { useEffect, useState } from "react";
import { SESSION_ENDED_EVENT } from "@/components/console/api";

/**
 * Shown on every console page once a request finds the session ended (signed out in another
 * tab, expired): what happened, and a way back to this very page after signing in again. The
 * forms keep what was typed meanwhile; each action's own message says it was not done.
 */
export function SessionEndedBanner() {
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    const onEnded = () => setEnded(true);
    window.addEventListener(SESSION_ENDED_EVENT, onEnded);
    return () => window.removeEventListener(SESSION_ENDED_EVENT, onEnded);
  }, []);
  // Set only by an event in the browser, so `window` is there whenever it shows.
  if (!ended) return null;
  const back = `${window.location.pathname}${window.location.search}`;
  return (
    <div role="alert" className="border-b border-amber-200 bg-amber-50">
      <div className="mx-auto flex max-w-5xl flex-wrap items-center justify-between gap-3 px-4 py-2 text-sm text-amber-900">
        <p>Your session has ended. Nothing more can be saved until you sign in again.</p>
        {/* A full page load: the new session's cookie is read by the server's layout too. */}
        <a href={`/signin?callbackUrl=${encodeURIComponent(back)}`} className="font-medium text-brand-700 underline hover:text-brand-600">
          Sign in again
        </a>
      </div>
    </div>
  );
}
