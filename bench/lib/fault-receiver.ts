// Webhook receivers for the fault scenario, in the bench's own process: one listener per
// subscription (its own port, so one can refuse connections while the others answer), each
// answering the subscription handshake and then, as its mode says, 200 (after checking the
// signature), 500, nothing until the service gives up, or no connection at all.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { verifyWebhookSignature } from "../../lib/webhooks/signature";
import { answerHandshake } from "./handshake";

export type ReceiverMode = "ok" | "error" | "hang" | "refuse";

/** One delivery attempt that reached a listener, and what it was answered. */
export type Attempt = {
  sub: string;
  eventId: string;
  objectId: string;
  /** Epoch milliseconds. */
  at: number;
  answered: "200" | "400 bad signature" | "500" | "held";
};

/** How long a held request is kept before its connection is dropped: past the service's 10 s timeout. */
const HOLD_MS = 11_000;

class Listener {
  readonly server: http.Server;
  readonly sockets = new Set<Socket>();
  readonly held = new Set<http.ServerResponse>();
  secret = "";
  mode: ReceiverMode = "ok";
  /** How long a healthy answer takes. */
  delayMs = 0;
  port = 0;

  constructor(
    readonly name: string,
    onAttempt: (a: Attempt) => void,
  ) {
    this.server = http.createServer((req, res) => {
      if (answerHandshake(req, res)) return;
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        let objectId = "";
        try {
          objectId = String((JSON.parse(raw.toString("utf8")) as { object_id?: unknown }).object_id ?? "");
        } catch {
          // left empty: the signature check below fails for anything the service did not sign
        }
        const attempt = (answered: Attempt["answered"]) =>
          onAttempt({ sub: this.name, eventId: String(req.headers["service-event-id"] ?? ""), objectId, at: Date.now(), answered });
        if (this.mode === "error") {
          attempt("500");
          res.writeHead(500, { "content-type": "text/plain" }).end("flapping");
        } else if (this.mode === "hang") {
          attempt("held");
          this.held.add(res);
          const drop = setTimeout(() => res.destroy(), HOLD_MS);
          res.on("close", () => {
            clearTimeout(drop);
            this.held.delete(res);
          });
        } else {
          const ok = verifyWebhookSignature(raw, req.headers["service-signature"] as string | undefined, this.secret).ok;
          // Processed on arrival; the answer may take a while, and a sender that dies meanwhile
          // never hears it (and sends again: a duplicate).
          attempt(ok ? "200" : "400 bad signature");
          const answer = () => void (res.destroyed || res.writeHead(ok ? 200 : 400).end());
          if (this.delayMs > 0) setTimeout(answer, this.delayMs);
          else answer();
        }
      });
    });
    this.server.keepAliveTimeout = 60_000;
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  async setMode(mode: ReceiverMode): Promise<void> {
    const was = this.mode;
    this.mode = mode;
    if (was === "hang" && mode !== "hang") for (const res of this.held) res.destroy();
    if (mode === "refuse" && was !== "refuse") {
      // Stop listening and drop kept-alive connections: the next attempt is refused.
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      for (const s of this.sockets) s.destroy();
      await closed;
    } else if (was === "refuse" && mode !== "refuse") {
      await this.listen();
    }
  }
}

export class FaultReceiver {
  readonly attempts: Attempt[] = [];
  private readonly listeners = new Map<string, Listener>();

  static async start(names: string[]): Promise<FaultReceiver> {
    const r = new FaultReceiver();
    for (const name of names) {
      const l = new Listener(name, (a) => r.attempts.push(a));
      await l.listen();
      r.listeners.set(name, l);
    }
    return r;
  }

  url(name: string): string {
    return `http://127.0.0.1:${this.get(name).port}/hook/${name}`;
  }

  setSecret(name: string, secret: string): void {
    this.get(name).secret = secret;
  }

  setMode(name: string, mode: ReceiverMode): Promise<void> {
    return this.get(name).setMode(mode);
  }

  setDelay(name: string, ms: number): void {
    this.get(name).delayMs = ms;
  }

  mode(name: string): ReceiverMode {
    return this.get(name).mode;
  }

  /** `sub eventId` of every attempt answered 200: what the receivers have. */
  delivered(): Set<string> {
    const got = new Set<string>();
    for (const a of this.attempts) if (a.answered === "200") got.add(`${a.sub} ${a.eventId}`);
    return got;
  }

  async close(): Promise<void> {
    for (const l of this.listeners.values()) {
      for (const res of l.held) res.destroy();
      for (const s of l.sockets) s.destroy();
      if (l.mode !== "refuse") await new Promise<void>((resolve) => l.server.close(() => resolve()));
    }
  }

  private get(name: string): Listener {
    const l = this.listeners.get(name);
    if (!l) throw new Error(`no receiver named ${name}`);
    return l;
  }
}
