import type { ReactNode } from "react";

const TONES = {
  error: "border-red-200 bg-red-50 text-red-800",
  success: "border-emerald-200 bg-emerald-50 text-emerald-800",
  info: "border-brand-100 bg-brand-50 text-brand-700",
  warning: "border-amber-200 bg-amber-50 text-amber-900",
} as const;

/**
 * A message on the page. Find it by its text: Next.js's route announcer is a role=alert too.
 * An outcome is announced (an error as an alert); a state the page shows whenever it loads (an
 * endpoint that is disabled) is `live={false}`: plain text, or a screen reader would interrupt
 * with it on every load and bury the alerts that matter.
 */
export function Notice({ tone = "info", live = true, children }: { tone?: keyof typeof TONES; live?: boolean; children: ReactNode }) {
  return (
    <div role={!live ? undefined : tone === "error" ? "alert" : "status"} data-kind={tone} className={`rounded-md border px-3 py-2 text-sm [overflow-wrap:anywhere] ${TONES[tone]}`}>
      {children}
    </div>
  );
}
