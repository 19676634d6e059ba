/**
 * An instant in the viewer's locale, with its zone named, e.g. "21 Nov 2026, 14:05 CET": in
 * `timeZone` when given (an athlete's own data reads in their zone, CONTRACT §9), else in the
 * browser's. Named, because both appear in the console and may differ (a profile zone set to
 * home, a browser abroad).
 */
export function formatInstant(iso: string, timeZone?: string): string {
  return new Date(iso).toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
    timeZone,
  });
}

/**
 * A message as a sentence: "give the token a name" → "Give the token a name." The service's
 * field details are fragments (`must be at most 100 characters`), which the console shows on
 * their own, under a field or in a form's notice.
 */
export function asSentence(detail: string): string {
  // Only a word: a detail may begin with what it is about, written as it must be (`fe80::1 is …`).
  const s = /^[a-z]+(\s|$)/.test(detail) ? detail.charAt(0).toUpperCase() + detail.slice(1) : detail;
  return /[.!?…]$/.test(s) ? s : `${s}.`;
}
