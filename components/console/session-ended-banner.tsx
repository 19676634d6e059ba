"use client";

import { useEffect, useRef, useState } from "react";
import { SESSION_ENDED_EVENT, setPagePerson } from "@/components/console/api";

/** How often an ended session is checked for again while the page is seen (and at every return to the tab). */
const CHECK_MS = 3_000;

type State = { kind: "live" } | { kind: "ended" } | { kind: "back" } | { kind: "other"; email: string };
type Person = { id: string; email: string };

/**
 * Shown on every console page once a request finds the session ended (signed out in another
 * tab, expired): what happened, and a way back. "Sign in again" opens the sign-in page in a new
 * tab, so this page keeps what was typed into its forms; once the session is back (checked when
 * the person returns to the tab, and every few seconds), the banner says so and the action can
 * simply be pressed again. Signed in as someone else meanwhile, the page is that person's no
 * more: the banner says so and offers a reload. Each action's own message says it was not done.
 *
 * It also names the page's person to every console request (setPagePerson), so that a page left
 * open after someone else signed in, in another tab, is refused as a session that ended rather
 * than acting for them. Set while rendering: the page's own requests start in its children's
 * effects, which run after this.
 */
export function SessionEndedBanner({ person }: { person: Person }) {
  // In the browser only: on the server the module is shared by every request's render.
  if (typeof window !== "undefined") setPagePerson(person.id);
  const { id, email } = person;
  const [state, setState] = useState<State>({ kind: "live" });
  const checking = useRef(false);

  useEffect(() => {
    const onEnded = () => setState({ kind: "ended" });
    window.addEventListener(SESSION_ENDED_EVENT, onEnded);
    return () => window.removeEventListener(SESSION_ENDED_EVENT, onEnded);
  }, []);

  const waiting = state.kind === "ended";
  useEffect(() => {
    if (!waiting) return;
    const check = async () => {
      if (checking.current) return;
      checking.current = true;
      try {
        const signedIn = await sessionPerson();
        if (!signedIn) return;
        setState(signedIn.id === id ? { kind: "back" } : { kind: "other", email: signedIn.email });
      } finally {
        checking.current = false;
      }
    };
    const onVisible = () => {
      if (document.visibilityState === "visible") void check();
    };
    // Only while the page is seen: a tab left in the background asks nothing until it is back.
    const timer = window.setInterval(onVisible, CHECK_MS);
    window.addEventListener("focus", onVisible);
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      window.clearInterval(timer);
      window.removeEventListener("focus", onVisible);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [waiting, id]);

  if (state.kind === "live") return null;
  if (state.kind === "back") {
    return (
      <Strip role="status">
        <p>You are signed in again. What you typed is still here: press the action again to save it.</p>
        <button type="button" onClick={() => setState({ kind: "live" })} className="font-medium text-brand-700 underline hover:text-brand-600">
          Dismiss
        </button>
      </Strip>
    );
  }
  if (state.kind === "other") {
    return (
      <Strip role="alert">
        <p>
          This browser is now signed in as {state.email}, not {email}. Reload to go on as {state.email}; this page still shows {email}&apos;s
          data.
        </p>
        <button type="button" onClick={() => window.location.reload()} className="font-medium text-brand-700 underline hover:text-brand-600">
          Reload
        </button>
      </Strip>
    );
  }
  // Set only by an event in the browser, so `window` is there whenever it shows.
  const back = `${window.location.pathname}${window.location.search}`;
  return (
    <Strip role="alert">
      <p>Your session has ended. Nothing more can be saved until you sign in again.</p>
      {/* A new tab: this page, and whatever was typed into it, stays as it is until the session is back. */}
      <a
        href={`/signin?callbackUrl=${encodeURIComponent(back)}`}
        target="_blank"
        rel="noopener"
        className="font-medium text-brand-700 underline hover:text-brand-600"
      >
        Sign in again<span className="sr-only"> (opens a new tab)</span>
      </a>
    </Strip>
  );
}

function Strip({ role, children }: { role: "alert" | "status"; children: React.ReactNode }) {
  return (
    <div role={role} className="border-b border-amber-200 bg-amber-50">
      <div className="mx-auto flex max-w-5xl flex-wrap items-center justify-between gap-3 px-4 py-2 text-sm text-amber-900">{children}</div>
    </div>
  );
}

/** Who is signed in, as the session endpoint tells it: null while nobody is (or it could not be asked). */
async function sessionPerson(): Promise<Person | null> {
  try {
    const res = await fetch("/api/auth/session", { credentials: "same-origin", cache: "no-store" });
    if (!res.ok) return null;
    const body = (await res.json()) as { user?: { id?: unknown; email?: unknown } } | null;
    const { id, email } = body?.user ?? {};
    return typeof id === "string" && typeof email === "string" ? { id, email } : null;
  } catch {
    return null;
  }
}
