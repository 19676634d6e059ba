// Which picked files may start sending now: pure, so the rule is tested without a browser.

/** queued → sending → sent (the service has it, processing) → finished (an outcome to read). */
export type Phase = "queued" | "sending" | "sent" | "finished";

/**
 * A picked file as these rules see it: `seq` counts up in the order files were picked (within one
 * pick too). `stopped`: sent, but its outcome is no longer asked for (the last ask was answered
 * with what asking again would only repeat: the upload gone, the session ended) until the
 * person asks ("Check again").
 */
export type QueuedFile = { key: string; phase: Phase; seq: number; stopped?: boolean };

const inPickOrder = <T extends QueuedFile>(items: readonly T[]) => [...items].sort((a, b) => a.seq - b.seq);

/**
 * The keys of the files that may start sending, in the order they were picked, so that at most
 * `parallel` are sending at once (the panel lists each pick's files under the newer picks, in
 * their own order; that is not the order here).
 */
export function mayStartSending(items: readonly QueuedFile[], parallel: number): Set<string> {
  const free = parallel - items.filter((i) => i.phase === "sending").length;
  if (free <= 0) return new Set();
  return new Set(
    inPickOrder(items)
      .filter((i) => i.phase === "queued")
      .slice(0, free)
      .map((i) => i.key),
  );
}

/**
 * The keys of the files sent and still processing whose outcome is asked for now: the `parallel`
 * picked first. The service processes uploads in turn, so a later one seldom finishes first, and
 * each ask counts against the person's window: a drop of a hundred files polling all at once
 * would spend it. The others are asked once their turn comes (a file already processed then
 * answers at the first ask). A file that stopped being asked about gives up its place, or the
 * files behind it would wait for a turn that never comes.
 */
export function mayPoll(items: readonly QueuedFile[], parallel: number): Set<string> {
  return new Set(
    inPickOrder(items)
      .filter((i) => i.phase === "sent" && !i.stopped)
      .slice(0, parallel)
      .map((i) => i.key),
  );
}
