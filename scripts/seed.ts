// `npm run db:seed`: seeds CONTRACT §8's demo world into the configured database.
import { getDbHandle } from "../lib/db/client";
import { seedDemoWorld } from "../lib/db/seed";
import { getEnv } from "../lib/env";

const handle = await getDbHandle();
try {
  const result = await seedDemoWorld(handle.db, { baseUrl: getEnv().baseUrl });
  console.log(result === "seeded" ? "Demo world seeded." : "The demo world is already there.");
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await handle.close();
}
