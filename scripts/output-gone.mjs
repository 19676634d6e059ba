// What a server process does when nobody reads its output any more.

/**
 * Calls `stop` once, the first time writing to stdout or stderr fails with EPIPE: the pipe's
 * reader is gone, so nothing this process says can be heard again.
 *
 * Without it, a Next.js server whose reader went away spins for as long as it lives: Next.js
 * logs every uncaught exception to stderr (the `uncaughtException` listener of
 * next/dist/server/lib/router-server.js), that write fails with EPIPE, the stream's unhandled
 * 'error' is another uncaught exception, which is logged, and so on, thousands of times a
 * second. Seen here as a server left at a third of a core, holding its port, after the
 * program that started it and read its output was killed. Node.js's own answer to a write to a
 * closed pipe, without that listener, is to end the process; this keeps that answer, and lets
 * the server end as it does on SIGTERM, with a failure's exit code.
 */
export function stopWhenOutputGone(stop) {
  let stopped = false;
  const onError = (err) => {
    // Any other failure (a full disk under a redirect) loses that line only, and is not thrown
    // into the same loop.
    if (err?.code !== "EPIPE" || stopped) return;
    stopped = true;
    stop();
  };
  process.stdout.on("error", onError);
  process.stderr.on("error", onError);
}
