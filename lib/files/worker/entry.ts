// The file worker's thread: bundled with its dependencies into one .mjs (./bundle.ts), because
// in the built server lib/ exists only inside Next.js's chunks. It answers one task at a time.
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { FileError } from "../types";
import { READY, type Reply, type Request } from "./protocol";
import { runTask } from "./run-task";

const port = parentPort;
if (!port) throw new Error("the file worker runs only as a worker thread");

// File work yields the CPU to requests: on Linux a nice value belongs to the thread that sets
// it, so only this thread runs at the lowest priority, and a burst of uploads takes the cores
// the API leaves idle rather than the API's share. Elsewhere it may apply to the whole process
// or be refused: then it is left as it is.
if (process.platform === "linux") {
  try {
    setPriority(19);
  } catch {
    // not permitted here: parse at normal priority
  }
}

port.on("message", (req: Request) => {
  let reply: Reply;
  let transfer: ArrayBuffer[] = [];
  try {
    const done = runTask(req);
    reply = { id: req.id, ok: true, result: done.result };
    transfer = done.transfer;
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    reply = { id: req.id, ok: false, error: { name: err.name, message: err.message, ...(e instanceof FileError ? { code: e.code } : {}) } };
  }
  port.postMessage(reply, transfer);
});

port.postMessage(READY);
