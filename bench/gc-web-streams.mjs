// What web streams cost the young generation (bench/README.md, "The burst's tail"): for each
// case, a child process makes 100,000 of it, and V8's own trace (--trace-gc-nvp) says how many
// bytes its minor collections (scavenges) found alive and promoted to the old generation, and
// how long they took. Garbage that dies young is promoted hardly at all.
//   npx node bench/gc-web-streams.mjs
import { spawnSync } from "node:child_process";

const N = 100_000;
const cases = {
  "plain objects": async () => ({ bytes: new Uint8Array(100), list: [1, 2, 3] }),
  "WritableStream, created": async () => new WritableStream({ write() {} }),
  "WritableStream, closed": async () => new WritableStream({}).getWriter().close(),
  // Next.js answers every route handler this way (pipeToNodeResponse): the answer's body piped
  // into a WritableStream whose sink writes to the Node response.
  "ReadableStream piped to a WritableStream": async () => {
    let sunk = 0;
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(100));
        c.close();
      },
    });
    await body.pipeTo(new WritableStream({ write: (chunk) => void (sunk += chunk.byteLength) }));
    return sunk;
  },
};

const name = process.argv[2];
if (name) {
  for (let i = 0; i < N; i++) {
    await cases[name]();
    if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
  }
} else {
  for (const c of Object.keys(cases)) {
    const run = spawnSync(process.execPath, ["--trace-gc-nvp", import.meta.filename, c], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`${c}: ${run.stderr}`);
    let promoted = 0;
    let ms = 0;
    let scavenges = 0;
    for (const line of run.stdout.split("\n")) {
      // Node 24 writes `key=value` pairs; later releases one JSON object after "GC: ".
      const json = line.indexOf("GC: {");
      const gc = json >= 0 ? JSON.parse(line.slice(json + 4)) : Object.fromEntries([...line.matchAll(/(\w+)=([^\s]+)/g)].map((m) => [m[1], m[2]]));
      if (gc.gc !== "s") continue;
      scavenges++;
      promoted += Number(gc.promoted ?? 0);
      ms += Number(gc.pause ?? 0);
    }
    const perKb = promoted / N / 1024;
    console.log(`${c.padEnd(42)} promoted ${(promoted / 2 ** 20).toFixed(1).padStart(6)} MiB (${perKb.toFixed(2)} KiB each), ${scavenges} scavenges, ${ms.toFixed(0)} ms`);
  }
}
