// Runs once per server process before it serves. The import sits inside the runtime check, where
// the bundler drops it from the Edge build (an early return would leave it in, with warnings about
// Node.js APIs the Edge runtime lacks).
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { registerNode } = await import("./instrumentation-node");
    await registerNode();
  }
}
