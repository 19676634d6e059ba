// Runs once per server process before it serves: migrate, seed the demo world, start workers.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { boot } = await import("./lib/boot");
  await boot();
}
