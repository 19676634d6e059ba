// Which picked files may start sending now: pure, so the rule is tested without a browser.

/** queued → sending → sent (the service has it, processing) → finished (an outcome to read). */
export type Phase = "queued" | "sending" | "sent" | "finished";

/**
 * The keys of the files that may start sending, oldest first, so that at most `parallel` are
 * sending at once. `items` lists the newest first, as the panel shows them.
 */
export function mayStartSending(items: readonly { key: string; phase: Phase }[], parallel: number): Set<string> {
  const free = parallel - items.filter((i) => i.phase === "sending").length;
  if (free <= 0) return new Set();
  const queued = items.filter((i) => i.phase === "queued");
  return new Set(queued.slice(Math.max(0, queued.length - free)).map((i) => i.key));
}

/**
 * The keys of the files sent and still processing whose outcome is asked for now: the `parallel`
 * oldest. The service processes uploads in turn, so a later one seldom finishes first, and
 * each ask counts against the person's window: a drop of a hundred files polling all at once
 * would spend it. The others are asked once their turn comes (a file already processed then
 * answers at the first ask).
 */
export function mayPoll(items: readonly { key: string; phase: Phase }[], parallel: number): Set<string> {
  const sent = items.filter((i) => i.phase === "sent");
  return new Set(sent.slice(Math.max(0, sent.length - parallel)).map((i) => i.key));
}
