// The file worker: a child process of the server, bundled with its dependencies into one .mjs
// (./bundle.ts), because in the built server lib/ exists only inside Next.js's chunks. It
// answers one task at a time over the IPC channel its parent opened (./pool.ts).
import { FileError } from "../types";
import { READY, type Reply, type Request, type Warmed } from "./protocol";
import { runTask } from "./run-task";
import { warmUp } from "./warm-up";

const send = process.send?.bind(process);
if (!send) throw new Error("the file worker runs only as a child process with an IPC channel");

process.on("message", (req: Request) => {
  let reply: Reply;
  try {
    reply = { id: req.id, ok: true, result: runTask(req) };
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    reply = { id: req.id, ok: false, error: { name: err.name, message: err.message, ...(e instanceof FileError ? { code: e.code } : {}) } };
  }
  send(reply);
});

// The parent going away closes the channel: nothing is left to answer.
process.on("disconnect", () => process.exit(0));
// A terminal's Ctrl-C or a service manager's stop reaches the whole process group. The worker
// is not the one to stop: it would fail the file in hand. The server finishes or hands back
// its uploads and then ends its workers, or its going away ends them (above).
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => {});

send(READY);
// Its first few hundred milliseconds, between tasks, warm the code that files go through; the
// pool says how many steps (its first argument).
const warmUpSteps = Number(process.argv[2] ?? 0);
if (warmUpSteps > 0) {
  warmUp(warmUpSteps, (err) => {
    const done: Warmed = { warmed: true, ...(err === undefined ? {} : { error: err instanceof Error ? err.message : String(err) }) };
    send(done);
  });
}
