// What a scenario hands back, how it is printed, and where it is written.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT, RESULTS_DIR } from "./paths";

/** One target from the issue, with the figure measured against it. */
export type Check = {
  name: string;
  measured: number;
  unit: "×" | "ms" | "req/s" | "MiB" | "B" | "";
  comparison: "≥" | "≤" | "<";
  target: number;
  pass: boolean;
  /** For a target that must hold in every round: each round's figure (`measured` is the worst). */
  rounds?: number[];
};

export function check(name: string, measured: number, comparison: Check["comparison"], target: number, unit: Check["unit"]): Check {
  const pass = comparison === "≥" ? measured >= target : comparison === "≤" ? measured <= target : measured < target;
  return { name, measured, unit, comparison, target, pass: Number.isFinite(measured) && pass };
}

/**
 * A target that must hold in every round, not only the best one: the worst round is the figure
 * checked, and every round's figure is kept beside it.
 */
export function checkEvery(name: string, rounds: number[], comparison: Check["comparison"], target: number, unit: Check["unit"]): Check {
  const worst = rounds.length === 0 ? NaN : comparison === "≥" ? Math.min(...rounds) : Math.max(...rounds);
  return { ...check(name, worst, comparison, target, unit), rounds };
}

/** A measured figure that is not itself a target (the bare handler's req/s, say). */
export type Figure = { name: string; value: number | string; unit?: string };

export type ScenarioReport = {
  figures: Figure[];
  checks: Check[];
  /** Reasons to distrust the figures (other work on the machine, a stale build). */
  warnings: string[];
  /** Everything else worth keeping: every round, configuration, build ids. */
  details: Record<string, unknown>;
};

export function machineInfo() {
  const git = (args: string[]) => {
    try {
      return execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return "unknown";
    }
  };
  const version = (pkg: string) => {
    try {
      return (JSON.parse(readFileSync(path.join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
    } catch {
      return "unknown";
    }
  };
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    next: version("next"),
    autocannon: version("autocannon"),
    commit: git(["rev-parse", "--short", "HEAD"]),
    worktreeChanged: git(["status", "--porcelain"]) !== "",
  };
}

const fmt = (n: number | string) =>
  typeof n === "string" ? n : Number.isInteger(n) ? n.toLocaleString("en") : n.toLocaleString("en", { maximumFractionDigits: 2 });

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

export function printReport(name: string, report: ScenarioReport): string {
  const figures = table([["figure", "value"], ...report.figures.map((f) => [f.name, `${fmt(f.value)}${f.unit ? ` ${f.unit}` : ""}`])]);
  const checks = table([
    ["target", "measured", "needed", "result"],
    ...report.checks.map((c) => [
      c.name,
      `${fmt(c.measured)}${c.unit && c.unit !== "×" ? ` ${c.unit}` : c.unit}` +
        (c.rounds && c.rounds.length > 1 ? ` (worst of ${c.rounds.map(fmt).join(", ")})` : ""),
      `${c.comparison} ${fmt(c.target)}${c.unit && c.unit !== "×" ? ` ${c.unit}` : c.unit}`,
      c.pass ? "PASS" : "FAIL",
    ]),
  ]);
  const failed = report.checks.filter((c) => !c.pass).length;
  const verdict = failed === 0 ? "all targets met" : `FAIL: ${failed} of ${report.checks.length} targets missed`;
  const warnings = report.warnings.map((w) => `WARNING: ${w}\n`).join("");
  const text = `\n== ${name} ==\n\n${figures}\n\n${checks}\n\n${warnings}${name}: ${verdict}\n`;
  console.log(text);
  return text;
}

export function writeResults(file: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const full = path.join(RESULTS_DIR, file);
  writeFileSync(full, JSON.stringify(data, null, 2) + "\n");
  return path.relative(REPO_ROOT, full);
}
