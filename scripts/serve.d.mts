// Types for scripts/serve.mjs, which the bench imports to run servers as `npm start` does.
export function workerPlan(
  env?: Record<string, string | undefined>,
  opts?: { service?: boolean },
): { workers: number; reason: string };
export function databaseIsLocal(url: string): boolean;
export function serve(opts: {
  appDir: string;
  nextArgs: string[];
  env?: Record<string, string | undefined>;
  log?: (line: string) => void;
}): Promise<void>;
/** Node options every server process starts with (a preload and a garbage-collection setting). */
export function serverNodeOptions(env?: Record<string, string | undefined>): string[];
