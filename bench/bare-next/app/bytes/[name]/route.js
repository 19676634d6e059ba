// GET /bytes/{name}: the files scenario's baseline, a route handler that answers bytes it read
// into memory at start (BENCH_BYTES_DIR/{name}.json), the same bytes the service's streams
// endpoint answers, so the two differ only in the work done to produce them.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

export const dynamic = "force-dynamic";

const dir = process.env.BENCH_BYTES_DIR;
const BODIES = new Map(
  dir ? readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => [f.slice(0, -5), readFileSync(path.join(dir, f))]) : [],
);

export async function GET(_req, { params }) {
  const body = BODIES.get((await params).name);
  if (!body) return new Response("no such body", { status: 404 });
  return new Response(body, { headers: { "Content-Type": "application/json" } });
}
