import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { DEMO_PASSWORD } from "./helpers";

// The README runs as written: its shell blocks, in order, pasted into one bash session against
// the service on this run's port ($BASE), the browser steps done by Playwright with the names
// the README gives, and every line a block prints held to the README's `# → …` lines. A block
// that fails, or prints something the README does not show, fails the journey; so does a
// webhook that does not arrive verified.

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");

function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = README.indexOf("\n## ", start + 4);
  return README.slice(start, end < 0 ? undefined : end);
}

type Block = { lang: string; code: string };
function blocks(text: string): Block[] {
  return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** `…` in the README stands for what differs from run to run. */
function pattern(shown: string): RegExp {
  return new RegExp(`^${shown.split("…").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/** One bash session, as a reader's terminal: variables and background jobs carry over between blocks. */
class Shell {
  private out = "";
  private n = 0;
  readonly proc: ChildProcess;
  constructor(cwd: string, env: Record<string, string>) {
    this.proc = spawn("bash", ["--norc", "--noprofile"], { cwd, env: { ...process.env, ...env }, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    this.proc.stdout!.setEncoding("utf8").on("data", (c: string) => (this.out += c));
    this.proc.stderr!.setEncoding("utf8").on("data", (c: string) => (this.out += c));
  }
  /** Runs a block; its output lines and the status of its last command. */
  async run(code: string, timeoutMs = 60_000): Promise<{ lines: string[]; status: number }> {
    const marker = `__README_BLOCK_${++this.n}__`;
    const from = this.out.length;
    this.proc.stdin!.write(`${code}\necho "${marker} $?"\n`);
    const deadline = Date.now() + timeoutMs;
    while (!this.out.includes(marker, from)) {
      if (Date.now() > deadline || this.proc.exitCode !== null) throw new Error(`block did not finish:\n${code}\n--- output ---\n${this.out.slice(from)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const at = this.out.indexOf(marker, from);
    const status = Number(/^ (\d+)/.exec(this.out.slice(at + marker.length))![1]);
    return { lines: this.out.slice(from, at).split("\n").filter((l) => l.trim() !== ""), status };
  }
  /** Waits until the session has printed `line` (a background job's output). */
  async waitFor(re: RegExp, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.out.split("\n").some((l) => re.test(l))) {
      if (Date.now() > deadline) throw new Error(`never printed ${re}:\n${this.out.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  get transcript() {
    return this.out;
  }
  kill() {
    try {
      process.kill(-this.proc.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** The values a reader copies from the browser: a line `NAME=…` in a block is replaced by the value. */
function withValues(code: string, values: Record<string, string>): string {
  return code.replace(/^([A-Z_]+)=(\S*…\S*)(\s+#.*)?$/gm, (line, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`the README asks for ${name}, which no browser step gave`);
    return `${name}=${v}`;
  });
}

/** Runs a block and holds its output to the README: every line printed is one the README shows, in order. */
async function runBlock(shell: Shell, block: Block, values: Record<string, string>, background: RegExp[]) {
  const expected = [...block.code.matchAll(/^# → (.*)$/gm)].map((m) => pattern(m[1]!));
  const { lines, status } = await shell.run(withValues(block.code, values));
  const printed = lines.filter((l) => !background.some((re) => re.test(l)));
  expect(status, `${block.code}\n--- printed ---\n${lines.join("\n")}`).toBe(0);
  expect(printed.length, `${block.code}\n--- printed ---\n${printed.join("\n")}`).toBe(expected.length);
  printed.forEach((line, i) => expect(line, `line ${i + 1} of\n${block.code}`).toMatch(expected[i]!));
}

async function signIn(page: Page, email: string) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
}

/** README step 2: Tokens → Create token → the name → the boxes → Create token, and the token shown once. */
async function createToken(page: Page, name: string, scopes: string[]) {
  await page.getByRole("link", { name: "Tokens" }).click();
  await page.getByRole("button", { name: "Create token" }).click();
  await page.getByLabel("Name", { exact: true }).fill(name);
  for (const box of await page.getByRole("checkbox").all()) await box.uncheck();
  for (const s of scopes) await page.getByRole("checkbox", { name: new RegExp(`^${s.replace(".", "\\.")}\\b`) }).check();
  await page.getByRole("button", { name: "Create token" }).click();
  const token = (await page.getByTestId("new-token").textContent())!.trim();
  expect(token).toMatch(/^aas_pat_/);
  return token;
}

async function signedIn(browser: Browser, email: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, email);
  return page;
}

test("the README's first steps run as written, on this run's port, to a verified signed webhook", async ({ browser, baseURL }) => {
  test.setTimeout(240_000);
  // The browser steps as the README words them.
  for (const words of ["`ava@example.com` / `demo-password`", "**Tokens**", "**Create token**", "name `readme`", "tick `activities.write`", "**Create token** again", "`cora@example.com`", "name\n`coach`", "**Allow**"]) {
    expect(README.replace(/\s+/g, " "), `README wording: ${words}`).toContain(words.replace(/\s+/g, " "));
  }
  // The reader's shell is in the clone (the files section uploads a sample from it); the files
  // the blocks write (whsec.txt, an export) go to a scratch folder that sees the clone's lib/.
  const dir = mkdtempSync(path.join(tmpdir(), "readme-"));
  symlinkSync(path.resolve("lib"), path.join(dir, "lib"));
  const shell = new Shell(dir, { BASE: baseURL! });
  const started = performance.now();
  try {
    const tryIt = blocks(section("Try the API in two minutes")).filter((b) => b.lang === "sh");
    const oauth = blocks(section("Connect an app with OAuth")).filter((b) => b.lang === "sh");
    const mcp = blocks(section("Connect an AI assistant (MCP)")).filter((b) => b.lang === "sh");
    const hooks = blocks(section("Webhooks"));
    const files = blocks(section("Activity files")).filter((b) => b.lang === "sh");
    const arrives = hooks.filter((b) => b.lang === "text").flatMap((b) => b.code.trim().split("\n").map(pattern));
    // What the webhook receiver prints in the background, whichever block is running then.
    const received = [/^(verified|NOT VERIFIED) [a-z_.]+$/];
    const values: Record<string, string> = {};

    // BASE, set once; here it is this run's port.
    expect(tryIt[0]!.code.trim()).toBe("BASE=http://localhost:3000");
    const ava = await signedIn(browser, "ava@example.com");
    values.TOKEN = await createToken(ava, "readme", ["athlete.read", "activities.read", "activities.write", "location.read"]);
    await runBlock(shell, tryIt[1]!, values, received);
    await runBlock(shell, tryIt[2]!, values, received);
    const cora = await signedIn(browser, "cora@example.com");
    values.COACH_TOKEN = await createToken(cora, "coach", ["athlete.read", "teams.read"]);
    await runBlock(shell, tryIt[3]!, values, received);

    // The authorization link, opened where ava is signed in; Allow (asked every time); the code from the address.
    const link = await shell.run(oauth[0]!.code);
    expect(link.status).toBe(0);
    await runBlockOutput(oauth[0]!, link.lines);
    const callback = ava.waitForRequest((r) => r.url().startsWith("http://127.0.0.1:8976/callback"));
    // Nothing listens on 127.0.0.1:8976: the browser's last navigation fails, as the README says.
    await ava.goto(link.lines.at(-1)!).catch(() => {});
    await ava.getByRole("button", { name: "Allow" }).click();
    values.CODE = new URL((await callback).url()).searchParams.get("code")!;
    await runBlock(shell, oauth[1]!, values, received);

    // The assistant's server, called with the same token.
    expect(mcp).toHaveLength(1);
    await runBlock(shell, mcp[0]!, values, received);

    // The webhook: receiver, subscription, an activity, and the verified delivery.
    const sh = hooks.filter((b) => b.lang === "sh");
    await runBlock(shell, sh[0]!, values, received);
    await runBlock(shell, sh[1]!, values, received);
    for (const re of arrives) await shell.waitFor(re);
    const seconds = (performance.now() - started) / 1000;
    console.log(`README path, from the first block to the verified webhook: ${seconds.toFixed(1)} s of commands and browser steps`);

    // Activity files: upload a sample, poll, streams, laps, the GPX export, delete.
    expect(files).toHaveLength(1);
    await runBlock(shell, files[0]!, values, received);
    const exported = /^# → (.+\.gpx)$/m.exec(files[0]!.code)![1]!;
    expect(readFileSync(path.join(dir, exported), "utf8")).toContain("<gpx");
    await shell.waitFor(/^verified activity\.deleted$/);
    expect(shell.transcript).not.toContain("NOT VERIFIED");
  } finally {
    shell.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

// A random base64url verifier starts with "-" once in 64 runs, and node took it for an option of
// its own ("node: bad option"): the arguments go after `--`.
test("the authorization block's PKCE lines hold for every verifier, one that starts with a dash too", () => {
  const oauth = blocks(section("Connect an app with OAuth")).filter((b) => b.lang === "sh");
  const lines = oauth[0]!.code.split("\n");
  const challengeLine = lines.find((l) => l.startsWith("CHALLENGE="))!;
  const resourceLine = lines.find((l) => l.startsWith("RESOURCE="))!;
  for (const verifier of ["-1XhfNXxoFyh9VdbYm2SIvokDa_kUzHm2JnRHkWY-8A", "--help", "Q2xlYXJseUFWZXJpZmllcldpdGhvdXRBRGFzaDAwMDA"]) {
    const script = `VERIFIER='${verifier}'\nBASE=http://localhost:3000\n${challengeLine}\n${resourceLine}\necho "$CHALLENGE $RESOURCE"`;
    const out = execFileSync("bash", ["-c", script], { encoding: "utf8" }).trim();
    expect(out).toBe(`${createHash("sha256").update(verifier).digest("base64url")} http%3A%2F%2Flocalhost%3A3000%2Fv1`);
  }
});

/** The authorization block's output, held to its `# → …` line (run separately: its last line is the link the browser opens). */
async function runBlockOutput(block: Block, lines: string[]) {
  const expected = [...block.code.matchAll(/^# → (.*)$/gm)].map((m) => pattern(m[1]!));
  expect(lines.length, lines.join("\n")).toBe(expected.length);
  lines.forEach((line, i) => expect(line).toMatch(expected[i]!));
}
