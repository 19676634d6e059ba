// `npm run db:seed`: seeds CONTRACT §8's demo world into the configured database.
import { getDbHandle } from "../lib/db/client";
import { seedDemoWorld } from "../lib/db/seed";
import { getEnv } from "../lib/env";

const handle = await getDbHandle().catch((err: Error) => {
  // The embedded database open in the running service, most often (lib/db/directory-lock.ts).
  console.error(err.message);
  process.exit(1);
});
try {
  const result = await seedDemoWorld(handle.db, { baseUrl: getEnv().baseUrl });
  console.log(result === "seeded" ? "Demo world seeded." : "The demo world is already there.");
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await handle.close();
}
