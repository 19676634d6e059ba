import type { ReactNode } from "react";

/**
 * Content that may scroll inside its box (a wide table, a long JSON body). It is a named region
 * in the tab order so that a keyboard can reach it and scroll it with the arrow keys (WCAG
 * 2.1.1; axe's scrollable-region-focusable), and a screen reader says what it holds.
 */
export function ScrollRegion({
  label,
  as: Tag = "div",
  className = "",
  children,
}: {
  /** What the region holds, said with ", scrollable": "Laps", "Event JSON". */
  label: string;
  as?: "div" | "pre";
  className?: string;
  children: ReactNode;
}) {
  return (
    <Tag
      tabIndex={0}
      role="region"
      aria-label={`${label}, scrollable`}
      className={`focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500/60 ${className}`}
    >
      {children}
    </Tag>
  );
}
