"use client";

import { useRef } from "react";

/** 32 random bits as hex, four times: `crypto.randomUUID` exists only in secure contexts, `getRandomValues` everywhere. */
export function nonce(): string {
  return Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(16).padStart(8, "0")).join("");
}

/** FNV-1a over the text: short, stable, enough to tell two bodies of one form apart. */
export function textHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * The `Idempotency-Key` of what a form creates. Pressing Save again after an answer that never
 * came (a dropped connection) sends the same body under the same key, and the service makes it
 * once and answers as it did the first time. A changed form is another submission (its body's
 * hash is in the key), and after a success `renew` starts the next one afresh.
 */
export function useSubmissionKey(): { keyFor: (body: unknown) => string; renew: () => void } {
  const current = useRef<string | null>(null);
  return {
    keyFor: (body) => {
      current.current ??= nonce();
      return `${current.current}.${textHash(JSON.stringify(body) ?? "")}`;
    },
    renew: () => {
      current.current = null;
    },
  };
}
