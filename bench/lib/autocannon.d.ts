// The part of autocannon 8's programmatic API the bench uses (the package ships no types).
declare module "autocannon" {
  type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  };
  type Options = {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
    headers?: Record<string, string>;
    method?: string;
    body?: string;
  };
  type Result = {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  };
  type Instance = PromiseLike<Result> & { stop: () => void };
  function autocannon(opts: Options): Instance;
  export default autocannon;
}
