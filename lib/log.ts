import { getEnv } from "./env";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, "silent">;

/** The longest string a log field keeps, and the longest line written. */
export const MAX_FIELD_CHARS = 4_000;
export const MAX_LINE_CHARS = 16_000;

/**
 * A query's parameters as drizzle puts them into a failed query's message (`\nparams: …`,
 * up to the stack or the end): they are the request's data, often a whole batch of it, and
 * never belong in a log line.
 */
const PARAMS = /\nparams: [\s\S]*?(?=\n {4}at |$)/g;

function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === "string") {
    const text = value.replace(PARAMS, "\nparams: [not logged]");
    return text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS)}… [${text.length - MAX_FIELD_CHARS} more characters]` : text;
  }
  if (value instanceof Error) return bounded(errorText(value), depth);
  if (value && typeof value === "object" && depth < 3) {
    const entries = Object.entries(value).slice(0, 50);
    return Object.fromEntries(entries.map(([k, v]) => [k, bounded(v, depth + 1)]));
  }
  return value;
}

/**
 * An error as one log field: its stack (or message) and its causes' messages, without the
 * parameters of a failed query.
 */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const parts = [err.stack ?? `${err.name}: ${err.message}`];
  for (let cause = err.cause, depth = 0; cause && depth < 3; depth++) {
    parts.push(`cause: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return parts.join("\n");
}

function emit(level: Level, msg: string, fields?: Record<string, unknown>): void {
  let threshold: number = LEVELS.info;
  try {
    threshold = LEVELS[getEnv().logLevel];
  } catch {
    // configuration errors are reported elsewhere; keep logging at info
  }
  if (LEVELS[level] < threshold) return;
  let line = JSON.stringify({ time: new Date().toISOString(), level, msg: bounded(msg), ...(bounded(fields ?? {}) as object) });
  if (line.length > MAX_LINE_CHARS) {
    line = JSON.stringify({ time: new Date().toISOString(), level, msg: bounded(msg), truncated: line.slice(0, MAX_LINE_CHARS) });
  }
  if (level === "error" || level === "warn") process.stderr.write(line + "\n");
  else process.stdout.write(line + "\n");
}

/** One JSON line per entry, so a trace id in a 500 problem can be found with grep. */
export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => emit("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => emit("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => emit("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => emit("error", msg, fields),
};
