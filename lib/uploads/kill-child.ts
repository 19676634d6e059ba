// A service process for the upload kill test (lib/uploads/kill-restart.test.ts): it opens the
// database named by the environment, records one upload of CHILD_FILE for a new athlete, and
// runs the local upload processor, which stops once the file is parsed (printing `parsed <id>`)
// and waits there, its claim in force, until the parent kills it with SIGKILL.
import { readFileSync } from "node:fs";
import { openDatabase } from "../db/client";
import { inWriteCtx } from "../http/operation";
import { signUp } from "../people/people";
import { createUpload, prepareUpload } from "./create-upload";
import { startUploadProcessor } from "./local-processor";

const handle = await openDatabase({ url: process.env.CHILD_DATABASE_URL || undefined, dataDir: process.env.CHILD_DATA_DIR });
const db = handle.db;
const out = (line: string) => process.stdout.write(line + "\n");

const athlete = await signUp(db, { email: `kill-${Date.now()}@example.test`, name: "Kill", password: "correct horse battery" }, { hasSubscription: true });
const file = await prepareUpload({ name: "ride.fit", bytes: readFileSync(process.env.CHILD_FILE!) });
const upload = await inWriteCtx({ db, actor: { kind: "session", userId: athlete.id } }, (ctx) => createUpload({ ctx, athleteId: athlete.id, fields: {}, file }));
out(`uploaded ${upload.id} ${athlete.id}`);
startUploadProcessor({
  db,
  pollMs: 100,
  leaseS: Number(process.env.CHILD_LEASE_S ?? 2),
  afterParse: async (id) => {
    out(`parsed ${id}`);
    // Until killed: the file is parsed and nothing of it written.
    await new Promise(() => {});
  },
});
