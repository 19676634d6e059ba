// A webhook receiver for the webhooks scenario, run as its own process (`fork`), so the
// service's deliveries and the bench's bare loop are received by the same code on the same
// CPU budget, apart from the sender being measured. It answers the subscription handshake,
// verifies every delivery's signature (HMAC of the exact bytes, the receiver's real cost), and
// records each arrival with a wall-clock time (`performance.timeOrigin + now()`, comparable
// across processes) for the parent to collect.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookSignature } from "../../lib/webhooks/signature";
import { answerHandshake } from "./handshake";

/** One arrival: the path it came to, the event, and when (epoch milliseconds, sub-ms). */
export type Arrival = { path: string; eventId: string; objectId: string; at: number; body: string; ok: boolean };

export type ToReceiver =
  /** The secret of each path (its subscription's), and the paths that answer 500. */
  | { type: "config"; secrets: Record<string, string>; down: string[]; keepBodies: boolean }
  /** Send back, and forget, everything received since the last drain. */
  | { type: "drain" };

export type FromReceiver =
  | { type: "listening"; port: number }
  | { type: "drained"; arrivals: Arrival[]; badSignatures: number; unknownPaths: number };

const now = () => performance.timeOrigin + performance.now();

let secrets: Record<string, string> = {};
let down = new Set<string>();
let keepBodies = false;
let arrivals: Arrival[] = [];
let badSignatures = 0;
let unknownPaths = 0;

const server = http.createServer((req, res) => {
  const path = (req.url ?? "").split("?")[0]!;
  if (answerHandshake(req, res)) return;
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = now();
    const raw = Buffer.concat(chunks);
    const secret = secrets[path];
    if (down.has(path)) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("down");
      return;
    }
    let ok = false;
    if (secret === undefined) unknownPaths++;
    else ok = verifyWebhookSignature(raw, req.headers["service-signature"] as string | undefined, secret).ok;
    if (!ok) badSignatures++;
    let objectId = "";
    try {
      objectId = (JSON.parse(raw.toString("utf8")) as { object_id?: string }).object_id ?? "";
    } catch {
      // counted as a bad signature already if it was not what the service signed
    }
    arrivals.push({
      path,
      eventId: String(req.headers["service-event-id"] ?? ""),
      objectId,
      at,
      body: keepBodies ? raw.toString("utf8") : "",
      ok,
    });
    res.writeHead(ok ? 200 : 400, { "content-type": "text/plain" });
    res.end();
  });
});
server.keepAliveTimeout = 60_000;

process.on("message", (m: ToReceiver) => {
  if (m.type === "config") {
    secrets = m.secrets;
    down = new Set(m.down);
    keepBodies = m.keepBodies;
  } else if (m.type === "drain") {
    const out: FromReceiver = { type: "drained", arrivals, badSignatures, unknownPaths };
    arrivals = [];
    badSignatures = 0;
    unknownPaths = 0;
    process.send!(out);
  }
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  process.send!({ type: "listening", port: (server.address() as AddressInfo).port } satisfies FromReceiver);
});
