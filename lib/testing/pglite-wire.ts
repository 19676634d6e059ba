import net from "node:net";
import type { AddressInfo } from "node:net";
import type { PGlite } from "@electric-sql/pglite";

export type WireServer = { host: string; port: number; close: () => Promise<void> };

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
/** Sync ends whatever extended-protocol exchange a vanished client left half done. */
const SYNC = Uint8Array.from([0x53, 0, 0, 0, 4]);

/**
 * Serves one PGlite instance over the PostgreSQL wire protocol on 127.0.0.1, so a
 * postgres.js client (and a TCP proxy in front of it) can use it like a server.
 *
 * PGlite is one backend: clients are served one at a time, each whole session after the
 * previous one closed, and a closed session's open transaction is rolled back, as a server
 * does when its client disappears. Messages are framed here, so PGlite sees whole messages
 * whatever the TCP segments were.
 *
 * Written for tests instead of depending on `@electric-sql/pglite-socket`: every release of
 * that package pins one exact `@electric-sql/pglite` version (none pins the 0.5.16 this
 * project uses) plus seven extension packages as required peers, so it cannot be installed
 * here without `--legacy-peer-deps`.
 */
export async function serveOverWire(db: PGlite): Promise<WireServer> {
  await db.waitReady;
  let sessions: Promise<void> = Promise.resolve();
  const sockets = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    let buffered = Buffer.alloc(0);
    let started = false;
    let wake: (() => void) | undefined;
    let closed = false;
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      wake?.();
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      closed = true;
      sockets.delete(socket);
      wake?.();
    });

    /** Whole messages at the head of the buffer, removed from it. */
    const takeMessages = (): Buffer[] => {
      const out: Buffer[] = [];
      for (;;) {
        if (!started) {
          if (buffered.length < 8) return out;
          const len = buffered.readInt32BE(0);
          if (buffered.length < len) return out;
          const msg = buffered.subarray(0, len);
          buffered = buffered.subarray(len);
          const code = msg.readInt32BE(4);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            socket.write("N");
            continue;
          }
          if (code === CANCEL_REQUEST) {
            socket.end();
            return out;
          }
          started = true;
          out.push(msg);
          continue;
        }
        if (buffered.length < 5) return out;
        const total = 1 + buffered.readInt32BE(1);
        if (buffered.length < total) return out;
        out.push(buffered.subarray(0, total));
        buffered = buffered.subarray(total);
      }
    };

    const session = async () => {
      while (!closed) {
        const messages = takeMessages();
        if (messages.length === 0) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        const reply = await db.execProtocolRaw(new Uint8Array(Buffer.concat(messages)));
        if (reply.length && !socket.destroyed) socket.write(reply);
        if (messages.some((m) => started && m[0] === 0x58)) socket.end(); // Terminate
      }
      await db.execProtocolRaw(SYNC);
      if (db.isInTransaction()) await db.exec("rollback");
      await db.exec("discard all");
    };
    sessions = sessions.then(session, session);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    host: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sessions.catch(() => {});
    },
  };
}
