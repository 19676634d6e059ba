// The Node 20 workaround that scripts/serve.mjs preloaded into every server process until the
// service moved to Node 24, kept here only so `npm run bench -- runtime` can measure it beside
// Node 24 without it (`node --import`, before Next.js loads): `new Request(url, { signal })`
// keeps `signal` as the request's signal instead of making a new signal that follows it.
//
// Why: Next.js builds each route handler's request as `new NextRequest(url, { signal })`, the
// signal aborting when the client goes away. Node 20's fetch (undici 6) makes such a request
// follow its signal through a WeakRef and a FinalizationRegistry entry. Entries pile up between
// major collections (about 5,000 at 1,000 req/s) and V8 settles them all at once: the mark-
// compact takes longer and the registry's cleanup callbacks then run back to back on the main
// thread. In the api-read benchmark that stall every few seconds was what set p99 at half load
// (bench/README.md, "The tail"). Keeping the given signal needs neither.
//
// What a handler sees is unchanged: `request.signal` aborts when the client disconnects, with
// the same reason. What differs: `request.signal` is the very signal passed in (the Fetch
// standard makes a new one), and a request made from such a request (`clone()`,
// `new Request(request)`) gets a signal that never aborts. Nothing here reads either.
const NativeRequest = globalThis.Request;
const installed = Symbol.for("aas.request-signal");

/** `init.signal` when it is a live signal this wrapper should keep (not absent, not aborted). */
function keptSignal(init) {
  if (init === null || typeof init !== "object") return undefined;
  const signal = init.signal;
  if (signal === null || signal === undefined) return undefined;
  // Anything that is not a real AbortSignal goes to the native constructor, which rejects it.
  if (!(signal instanceof AbortSignal) || signal.aborted) return undefined;
  return signal;
}

/**
 * `Request`, except that a live `init.signal` becomes the request's own `signal` property
 * rather than being followed. A Proxy rather than a subclass: `instanceof Request` stays true
 * for requests the platform makes itself, and `class X extends Request` still works.
 */
function requestKeepingSignal(Base) {
  return new Proxy(Base, {
    construct(target, args, newTarget) {
      const [input, init] = args;
      const signal = keptSignal(init);
      if (!signal) return Reflect.construct(target, args, newTarget);
      // Every other member is read through the prototype, as the platform reads them.
      const request = Reflect.construct(target, [input, { __proto__: init, signal: undefined }], newTarget);
      Object.defineProperty(request, "signal", { value: signal, enumerable: false, configurable: true, writable: false });
      return request;
    },
  });
}

if (NativeRequest && !globalThis[installed]) {
  globalThis[installed] = true;
  globalThis.Request = requestKeepingSignal(NativeRequest);
}
