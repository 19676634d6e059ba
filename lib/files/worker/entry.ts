// The file worker: a child process of the server, bundled with its dependencies into one .mjs
// (./bundle.ts), because in the built server lib/ exists only inside Next.js's chunks. It
// answers one task at a time over the IPC channel its parent opened (./pool.ts).
import { FileError } from "../types";
import { fileOf, READY, withFile, type Reply, type Request, type Slice, type Warmed } from "./protocol";
import { runTask } from "./run-task";
import { warmUp } from "./warm-up";

const send = process.send?.bind(process);
if (!send) throw new Error("the file worker runs only as a child process with an IPC channel");

/** A task whose file is arriving in slices (./pool.ts), and how much of it has come. */
let arriving: { req: Request; file: Uint8Array; at: number } | null = null;

process.on("message", (message: Request | Slice) => {
  if ("slice" in message) {
    const a = arriving;
    if (!a || a.req.id !== message.id) return;
    if (message.slice.byteLength > a.file.byteLength - a.at) {
      arriving = null;
      answer({ id: a.req.id, ok: false, error: { name: "Error", message: "The file's slices came to more bytes than announced." } });
      return;
    }
    a.file.set(message.slice, a.at);
    a.at += message.slice.byteLength;
    if (a.at === a.file.byteLength) {
      arriving = null;
      run(withFile(a.req, a.file));
    }
    return;
  }
  if (message.incoming !== undefined && fileOf(message) !== undefined) {
    // One task at a time: a new one replaces whatever had not finished arriving.
    arriving = { req: message, file: new Uint8Array(message.incoming), at: 0 };
    return;
  }
  run(message);
});

function answer(reply: Reply): void {
  send!(reply);
}

function run(req: Request): void {
  let reply: Reply;
  try {
    reply = { id: req.id, ok: true, result: runTask(req) };
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    reply = { id: req.id, ok: false, error: { name: err.name, message: err.message, ...(e instanceof FileError ? { code: e.code } : {}) } };
  }
  answer(reply);
}

// The parent going away closes the channel: nothing is left to answer.
process.on("disconnect", () => process.exit(0));

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
