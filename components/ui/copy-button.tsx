"use client";

import { useRef, useState } from "react";
import { Button } from "./button";

/**
 * Copies `text`. Where the browser has no clipboard for the page (plain http on an address other
 * than localhost) or refuses, it says so and selects the text beside it, so the secret shown only
 * once can still be copied by hand.
 */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const button = useRef<HTMLButtonElement>(null);
  return (
    <Button
      ref={button}
      type="button"
      variant="secondary"
      onClick={async () => {
        try {
          // Missing outside a secure context: the call then throws, like a refusal.
          await navigator.clipboard.writeText(text);
          setState("copied");
          setTimeout(() => setState((s) => (s === "copied" ? "idle" : s)), 2000);
        } catch {
          setState("failed");
          selectBeside(button.current, text);
        }
      }}
    >
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select the text" : label}
    </Button>
  );
}

/** Selects the element next to `button` that shows exactly `text` (every caller puts it in the same row). */
function selectBeside(button: HTMLElement | null, text: string) {
  const shown = Array.from(button?.parentElement?.children ?? []).find((el) => el !== button && el.textContent === text);
  if (shown) window.getSelection()?.selectAllChildren(shown);
}
