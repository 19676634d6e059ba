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
/** Writes AUTH_SECRET and SECRETS_KEY into DATA_DIR/secrets.json when neither env nor the file has them. */
export function ensureGeneratedSecrets(env: Record<string, string | undefined>): void;
