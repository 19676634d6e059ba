import { EventEmitter } from "node:events";

/**
 * In-process signal that new webhook work exists (an event appended, a delivery re-queued),
 * so the local runner starts at once instead of waiting for its next poll. Instances on a
 * shared PostgreSQL also hear each other through LISTEN/NOTIFY (see the local runner).
 */
const g = globalThis as unknown as { __aasWebhookWake?: EventEmitter };
const emitter = (g.__aasWebhookWake ??= new EventEmitter().setMaxListeners(50));

export function wakeWebhookRunner(): void {
  emitter.emit("wake");
}

export function onWebhookWake(listener: () => void): () => void {
  emitter.on("wake", listener);
  return () => emitter.off("wake", listener);
}
