"use client";

import { useLayoutEffect } from "react";

const SUFFIX = " · Athlete Activity Service";

/**
 * Gives the page the title `title` (null: the route's own) while the calling component is
 * shown, for what a route's static metadata cannot know: whose activities these are, or that the
 * thing asked for is not there. On a client-side navigation Next.js may apply the route's
 * metadata title after this component's first effects, which left that title standing
 * (“Athlete” where “Ava Lind’s activities” belonged): so the title is kept while shown, put back
 * whenever the head changes it. The observer goes in a layout effect, whose cleanup runs within
 * the commit that removes the component, so the next page's own title is never overwritten.
 */
export function useDocumentTitle(title: string | null): void {
  useLayoutEffect(() => {
    if (!title) return;
    const full = `${title}${SUFFIX}`;
    const keep = () => {
      if (document.title !== full) document.title = full;
    };
    keep();
    const observer = new MutationObserver(keep);
    observer.observe(document.head, { subtree: true, childList: true, characterData: true });
    return () => observer.disconnect();
  }, [title]);
}
