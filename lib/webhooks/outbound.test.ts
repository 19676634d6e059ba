import { afterAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { refusedUrl, startReceiver, type Receiver } from "../testing/webhook-receiver";
import { isPublicAddress, mayConnectTo, nameRefusal, RESPONSE_EXCERPT_BYTES, sendOutbound } from "./outbound";

const receivers: Receiver[] = [];
afterAll(() => Promise.all(receivers.map((r) => r.close())));
async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}
const post = (url: string, over: Partial<Parameters<typeof sendOutbound>[0]> = {}) =>
  sendOutbound({ url, method: "POST", headers: { "content-type": "application/json" }, body: "{}", allowPrivate: true, timeoutMs: 2000, ...over });

describe("sendOutbound (CONTRACT §7: 10 s, no redirects, 4 KiB, connect-time address check)", () => {
  it("sends the body and headers given and reports the answer", async () => {
    const rx = await receiver(() => ({ status: 201, body: "created" }));
    const r = await post(rx.url, { body: '{"a":1}', headers: { "content-type": "application/json", "x-test": "yes" } });
    expect(r).toMatchObject({ outcome: "response", status: 201, bodyExcerpt: "created" });
    expect(rx.requests[0]).toMatchObject({ method: "POST", body: '{"a":1}' });
    expect(rx.requests[0]!.headers["x-test"]).toBe("yes");
  });

  it("refuses loopback and private addresses unless allowed: IP literals and names that resolve to them", async () => {
    const rx = await receiver();
    // A name over plain HTTP is refused for its scheme first when private networks are not allowed (below).
    for (const url of [rx.url, `https://localhost:${rx.port}/hook`, `http://[::1]:${rx.port}/hook`, "http://10.1.2.3/hook", "http://169.254.169.254/latest"]) {
      const r = await post(url, { allowPrivate: false });
      expect(r, url).toMatchObject({ outcome: "not_sent", error: "blocked_address" });
    }
    expect(rx.requests).toHaveLength(0);
    expect(await post(`http://localhost:${rx.port}/hook`, { allowPrivate: true })).toMatchObject({ outcome: "response", status: 200 });
    expect(isPublicAddress("93.184.216.34")).toBe(true);
    expect(isPublicAddress("::ffff:127.0.0.1")).toBe(false);
    expect(isPublicAddress("100.64.0.1")).toBe(false);
    // `[::127.0.0.1]` in a URL is `[::7f00:1]` once parsed: the IPv4-compatible form.
    expect(new URL("https://[::127.0.0.1]/").hostname).toBe("[::7f00:1]");
    expect(isPublicAddress("::7f00:1")).toBe(false);
    expect(isPublicAddress("::808:808")).toBe(false);
    expect(isPublicAddress("2606:4700:4700::1111")).toBe(true);
  });

  it("never reaches link-local or a cloud's metadata service, even with private networks allowed: the delivery log would show what it answered", async () => {
    const metadata = [
      "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
      "http://[::ffff:169.254.169.254]/latest",
      "http://[fe80::1]/hook",
      "http://[fd00:ec2::254]/latest",
      "http://100.100.100.200/latest/meta-data",
      "http://168.63.129.16/machine",
    ];
    for (const url of metadata) {
      expect(await post(url, { allowPrivate: true }), url).toMatchObject({ outcome: "not_sent", error: "blocked_address", detail: expect.stringContaining("link-local or cloud metadata") });
    }
    // Refused for what it is, whichever rule would also refuse it: a public address that is a metadata service, a private one that is not.
    expect(await post("https://168.63.129.16/machine", { allowPrivate: false })).toMatchObject({ detail: "168.63.129.16 is a link-local or cloud metadata address" });
    expect(await post("https://10.1.2.3/hook", { allowPrivate: false })).toMatchObject({ detail: "10.1.2.3 is not a public address" });
    for (const [address, allowPrivate, may] of [
      ["127.0.0.1", true, true],
      ["10.1.2.3", true, true],
      ["fd00::1", true, true],
      ["100.64.0.1", true, true],
      ["127.0.0.1", false, false],
      ["93.184.216.34", false, true],
      ["169.254.0.1", true, false],
      ["fe80::abcd", true, false],
      ["FD00:EC2:0:0:0:0:0:254", true, false],
      ["168.63.129.16", false, false],
      ["fd20:ce::254", true, false],
      // 169.254.169.254 inside IPv6: IPv4-compatible, translated, NAT64, 6to4, Teredo.
      ["::169.254.169.254", true, false],
      ["::ffff:0:a9fe:a9fe", true, false],
      ["64:ff9b::a9fe:a9fe", true, false],
      ["2002:a9fe:a9fe::1", true, false],
      ["2001:0:4136:e378:8000:63bf:5601:5601", true, false],
      ["64:ff9b::a00:1", true, true],
      ["not an address", true, false],
    ] as const) {
      expect(mayConnectTo(address, allowPrivate), `${address} ${allowPrivate}`).toBe(may);
    }
  });

  it("sends over https:// only unless private networks are allowed, whenever the URL was stored", async () => {
    const rx = await receiver();
    // A public name over plain HTTP: refused before any lookup or connection.
    for (const url of ["http://hooks.example.com/hook", "ftp://hooks.example.com/hook", "file:///etc/passwd"]) {
      expect(await post(url, { allowPrivate: false }), url).toMatchObject({ outcome: "not_sent", error: "invalid_url" });
    }
    expect(await post(rx.url, { allowPrivate: true })).toMatchObject({ outcome: "response", status: 200 });
    expect(await post(rx.url.replace("http:", "ftp:"), { allowPrivate: true })).toMatchObject({ outcome: "not_sent", error: "invalid_url" });
  });

  it("does not follow redirects: a 302 is the answer", async () => {
    const target = await receiver();
    const rx = await receiver(() => ({ status: 302, headers: { location: target.url }, body: "moved" }));
    expect(await post(rx.url)).toMatchObject({ outcome: "response", status: 302, bodyExcerpt: "moved" });
    expect(target.requests).toHaveLength(0);
  });

  it("reads at most 4 KiB of the answer", async () => {
    const rx = await receiver(() => ({ status: 500, body: "x".repeat(200_000) }));
    const r = await post(rx.url);
    expect(r).toMatchObject({ outcome: "response", status: 500 });
    expect(r.outcome === "response" && r.bodyExcerpt.length).toBe(RESPONSE_EXCERPT_BYTES);
  });

  it("gives up after the timeout: not sent, timeout", async () => {
    const rx = await receiver(() => ({ status: 200, delayMs: 3000 }));
    const r = await post(rx.url, { timeoutMs: 300 });
    expect(r).toMatchObject({ outcome: "not_sent", error: "timeout" });
    expect(r.durationMs).toBeLessThan(2000);
  });

  it("takes a status that arrived as the answer, though its body did not end in time or the connection broke", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("accepted, and then nothing more");
      if (req.url === "/reset") setImmediate(() => res.socket?.destroy());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const slow = await post(`${base}/slow`, { timeoutMs: 400 });
      expect(slow).toMatchObject({ outcome: "response", status: 200, bodyExcerpt: "accepted, and then nothing more", bodyComplete: false, bodyError: "timeout" });
      const cut = await post(`${base}/reset`);
      expect(cut).toMatchObject({ outcome: "response", status: 200, bodyComplete: false });
      expect(cut.outcome === "response" && cut.bodyError).not.toBeNull();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("names an answer that is not HTTP, one whose headers run past 16 KiB, and an interim 100 or 101 not asked for", async () => {
    const net = await import("node:net");
    const server = net.createServer((socket) => {
      socket.once("data", (request) => {
        const line = request.toString("latin1");
        if (line.startsWith("POST /garbage")) socket.end("NOT HTTP AT ALL\r\n\r\n");
        else if (line.startsWith("POST /continue")) socket.end("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        else if (line.startsWith("POST /upgrade")) socket.end("HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n");
        else socket.end(`HTTP/1.1 200 OK\r\nx-big: ${"a".repeat(100_000)}\r\ncontent-length: 0\r\n\r\n`);
      });
      socket.on("error", () => {});
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await post(`${base}/garbage`)).toMatchObject({ outcome: "not_sent", error: "invalid_response" });
      expect(await post(`${base}/big-headers`)).toMatchObject({ outcome: "not_sent", error: "invalid_response" });
      // An interim answer not asked for: the receiver's answer, not a connection reset.
      expect(await post(`${base}/continue`)).toMatchObject({ outcome: "not_sent", error: "invalid_response", detail: expect.stringContaining("100 Continue") });
      expect(await post(`${base}/upgrade`)).toMatchObject({ outcome: "not_sent", error: "invalid_response", detail: expect.stringContaining("101") });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("names a refused connection and a name that does not resolve", async () => {
    expect(await post(await refusedUrl())).toMatchObject({ outcome: "not_sent", error: "connection_refused" });
    expect(await post("http://no-such-host.invalid/hook")).toMatchObject({ outcome: "not_sent", error: "dns" });
    expect(await post("not a url")).toMatchObject({ outcome: "not_sent", error: "invalid_url" });
  });
});

describe("a refused name, in words", () => {
  it("names the host as written after words of its own, so the console's sentence does not capitalise it (\"Localhost resolves…\")", () => {
    expect(nameRefusal("localhost", [{ address: "127.0.0.1" }])).toBe("the host localhost resolves only to non-public addresses");
    expect(nameRefusal("metadata.internal", [{ address: "169.254.169.254" }])).toBe("the host metadata.internal resolves only to link-local or cloud metadata addresses");
  });
});
