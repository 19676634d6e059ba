import net from "node:net";
import type { AddressInfo } from "node:net";

export type TcpProxy = {
  port: number;
  /** Cuts every open connection and refuses new ones until `restore()`: the upstream is gone. */
  cut: () => void;
  restore: () => void;
  /**
   * Cuts, as `cut()` does, at the moment a client sends bytes containing `marker` (which are
   * not passed on): an outage in the middle of a request. Resolves when it has happened.
   */
  cutAt: (marker: string) => Promise<void>;
  close: () => Promise<void>;
};

/**
 * A TCP proxy on 127.0.0.1 in front of `upstream`, for tests that need the database to go
 * away and come back while the service keeps running.
 */
export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let down = false;
  let trap: { marker: Buffer; fired: () => void } | undefined;
  const cutAll = () => {
    for (const [a, b] of [...pairs]) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };

  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const onward = net.connect(upstream.port, upstream.host);
    const pair: [net.Socket, net.Socket] = [client, onward];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      onward.destroy();
    };
    client.on("data", (chunk) => {
      if (trap && chunk.includes(trap.marker)) {
        const fired = trap.fired;
        trap = undefined;
        down = true;
        cutAll();
        fired();
        return;
      }
      onward.write(chunk);
    });
    onward.on("data", (chunk) => client.write(chunk));
    for (const s of pair) {
      s.on("error", drop);
      s.on("close", drop);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true;
      cutAll();
    },
    restore() {
      down = false;
    },
    cutAt(marker) {
      return new Promise((resolve) => {
        trap = { marker: Buffer.from(marker), fired: resolve };
      });
    },
    close() {
      cutAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
