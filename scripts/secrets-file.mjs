// DATA_DIR/secrets.json, the secrets the service generates when the operator gave none: read and
// written the same way by the launcher (scripts/serve.mjs, before its workers start) and by the
// service itself (lib/secrets.ts).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * The secrets in `file`, or {} when there is no file. A file that is there but cannot be read is
 * an error, never an empty one: secrets made anew over it would end every session and leave
 * every sealed secret undecryptable.
 */
export function readSecretsFile(file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if (existsSync(file)) throw new Error(`${file} cannot be read: ${err.message}`);
    return {};
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not readable JSON: ${err.message}. Restore it, or remove it to make new secrets (sessions end, and sealed secrets are lost).`);
  }
}

/**
 * Writes every secret (mode 0600) beside `file` and renames it over it, so a crash mid-write
 * leaves the old file whole; a full rewrite keeps every name.
 */
export function writeSecretsFile(file, secrets) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  renameSync(tmp, file);
}
