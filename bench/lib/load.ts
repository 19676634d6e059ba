// Load generation. Throughput: autocannon, closed loop (each connection sends its next request
// when the previous answer arrives). Latency at a given load: an open-loop generator here,
// because autocannon's rate option sends each connection's quota for the second back to back
// and then idles, so its "half load" is full load half of the time.
import http from "node:http";
import autocannon from "autocannon";

/** A request to load a server with: GET unless told otherwise. */
export type Target = { url: string; headers?: Record<string, string>; method?: "GET" | "POST"; body?: string };

export type Latency = { p50: number; p90: number; p99: number; max: number; mean: number };

export type ThroughputResult = {
  rps: number;
  requests: number;
  durationS: number;
  connections: number;
  /** autocannon's latencies, whole milliseconds, under saturation. */
  latencyMs: { p50: number; p99: number };
};

export type RateResult = {
  targetRps: number;
  achievedRps: number;
  requests: number;
  /** From the moment each request was due, so a stalled server cannot hide its queue. */
  latencyMs: Latency;
  /** From the moment each request was actually written. */
  serviceMs: Latency;
};

export class LoadError extends Error {}

/** How long the open-loop generators keep an idle keep-alive socket: under the server's 5 s. */
const IDLE_SOCKET_MS = 4_000;

/** Max requests per second with `connections` connections for `durationS` seconds. */
export async function throughput(target: Target, opts: { connections: number; durationS: number }): Promise<ThroughputResult> {
  const result = await autocannon({
    url: target.url,
    headers: target.headers,
    // autocannon refuses an explicit `method: undefined`.
    ...(target.method ? { method: target.method } : {}),
    ...(target.body !== undefined ? { body: target.body } : {}),
    connections: opts.connections,
    duration: opts.durationS,
    timeout: 10,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    const codes = Object.entries(result.statusCodeStats)
      .map(([code, s]) => `${code}×${s.count}`)
      .join(", ");
    throw new LoadError(`${target.url}: ${result.non2xx} non-2xx responses and ${result.errors} errors (${codes})`);
  }
  return {
    rps: result.requests.average,
    requests: result.requests.total,
    durationS: result.duration,
    connections: opts.connections,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
  };
}

function percentiles(samples: number[]): Latency {
  if (samples.length === 0) return { p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const s = Float64Array.from(samples).sort();
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(s[s.length - 1]!),
    mean: round(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

type Sample = { dueMs: number; sentMs: number; doneMs: number };

function send(agent: http.Agent, target: Target, dueMs: number): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const sentMs = performance.now();
    const req = http.get(target.url, { agent, headers: target.headers, timeout: 10_000 }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode !== 200) reject(new LoadError(`${target.url}: HTTP ${res.statusCode}`));
        else resolve({ dueMs, sentMs, doneMs: performance.now() });
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new LoadError(`${target.url}: no answer within 10 s`)));
    req.on("error", reject);
  });
}

/**
 * Requests sent at a steady `rps`, each due at start + i / rps whether or not earlier ones
 * have been answered (an open loop), over up to `maxSockets` keep-alive connections.
 *
 * `warmupS`: the loop runs that long first at the same rate, on the same connections, and only
 * requests due after it count. The first second of a loop opens its connections all at once,
 * and a server that sat idle while another side was measured comes back to V8's memory-reducing
 * collections (bench/README.md, "The first seconds after idle"): neither is the steady rate
 * being measured. A queue left by the warm-up still delays the counted requests: each is timed
 * from when it was due.
 */
export async function atRate(
  target: Target,
  opts: { rps: number; durationS: number; maxSockets?: number; warmupS?: number },
): Promise<RateResult> {
  // A socket left idle is closed by the client before the server's keep-alive timeout (5 s, also
  // the hint Node's agent follows): at that limit both sides close at once, and a request sent
  // on the socket just then failed the whole run with ECONNRESET.
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 64, timeout: IDLE_SOCKET_MS });
  const warm = Math.round(opts.rps * (opts.warmupS ?? 0));
  const total = warm + Math.round(opts.rps * opts.durationS);
  const intervalMs = 1000 / opts.rps;
  const pending: Promise<Sample>[] = [];
  const start = performance.now();
  try {
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        while (pending.length < total && start + pending.length * intervalMs <= now) {
          const p = send(agent, target, start + pending.length * intervalMs);
          p.catch(() => {}); // surfaced by Promise.all below
          pending.push(p);
        }
        if (pending.length < total) setTimeout(tick, 1);
        else resolve();
      };
      tick();
    });
    const samples = (await Promise.all(pending)).slice(warm);
    const end = Math.max(...samples.map((s) => s.doneMs));
    return {
      targetRps: opts.rps,
      achievedRps: Math.round((samples.length / (end - samples[0]!.dueMs)) * 1000),
      requests: samples.length,
      latencyMs: percentiles(samples.map((s) => s.doneMs - s.dueMs)),
      serviceMs: percentiles(samples.map((s) => s.doneMs - s.sentMs)),
    };
  } finally {
    agent.destroy();
  }
}

/** One request at a time on one connection: the cost of a request with no queueing in front of it. */
export async function sequential(target: Target, opts: { durationS: number }): Promise<{ requests: number; latencyMs: Latency }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, timeout: IDLE_SOCKET_MS });
  const times: number[] = [];
  const until = performance.now() + opts.durationS * 1000;
  try {
    while (performance.now() < until) {
      const s = await send(agent, target, performance.now());
      times.push(s.doneMs - s.sentMs);
    }
  } finally {
    agent.destroy();
  }
  return { requests: times.length, latencyMs: percentiles(times) };
}

/** GET returning parsed JSON, failing on anything but 200. */
export async function getJson<T>(target: Target): Promise<T> {
  const res = await fetch(target.url, { headers: target.headers });
  const text = await res.text();
  if (res.status !== 200) throw new LoadError(`${target.url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
