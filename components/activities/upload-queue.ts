// Which picked files may start sending now: pure, so the rule is tested without a browser.

/** queued → sending → sent (the service has it, processing) → finished (an outcome to read). */
export type Phase = "queued" | "sending" | "sent" | "finished";

/**
 * The keys of the files that may start sending, oldest first, so that at most `parallel` are
 * sending at once. `items` lists the newest first, as the panel shows them. A file waits while an
 * older one of the same size is sending (it may hold the same bytes): the service calls the
 * later of two identical files the duplicate, so the one picked first must reach it first.
 */
export function mayStartSending(items: readonly { key: string; phase: Phase; size: number }[], parallel: number): Set<string> {
  let free = parallel - items.filter((i) => i.phase === "sending").length;
  const out = new Set<string>();
  const onTheirWay = new Set(items.filter((i) => i.phase === "sending").map((i) => i.size));
  for (const i of [...items].reverse()) {
    if (free === 0) break;
    if (i.phase !== "queued" || onTheirWay.has(i.size)) continue;
    onTheirWay.add(i.size);
    out.add(i.key);
    free--;
  }
  return out;
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
