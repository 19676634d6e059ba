import { afterAll, beforeAll } from "vitest";
import { startLocalRunner, type LocalRunner } from "../webhooks/local-runner";
import type { Api } from "./fixtures";
import { startReceiver, type Receiver } from "./webhook-receiver";

/**
 * For a test file of deliveries: the local runner over the test API's database for the file's
 * tests (woken by commits, no poll to speak of; a failure retried after 50 ms; 2 s to answer),
 * and receivers on loopback, all stopped after the file.
 */
export function runnerForFile(api: Api) {
  let runner: LocalRunner | undefined;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    runner = startLocalRunner({ db: await api.db(), allowPrivate: true, schedule: [0.05], pollMs: 60_000, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await runner?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });
  return {
    /** The runner's `idle()`: a whole pass after the call ended with nothing in flight. */
    idle: () => runner!.idle(),
    async receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
      const r = await startReceiver(...args);
      receivers.push(r);
      return r;
    },
  };
}
