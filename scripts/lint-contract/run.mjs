// run.mjs: lints docs/openapi.yaml with Spectral (spectral:oas and the OWASP API
// Security ruleset, .spectral.mjs) and Redocly (its recommended rules,
// redocly.yaml), each as pinned in package-lock.json, and fails on any error or
// warning that no x-lint note of the document justifies, on a note that names
// an unknown reason, and on a stale note (one whose rule no longer finds
// anything where it stands). scripts/lint-contract.sh runs it from the
// repository's root; make lint and make test run that.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { documentPath, pointer, readNotes, redoclyIgnores } from "./notes.mjs";

const say = (s) => console.log("lint-contract: " + s);
// Neither tool may reach the network: no telemetry, no update check.
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_UPDATE_NOTIFIER: "1" };

// run returns a tool's JSON report, whatever its exit code (both exit 1 on
// findings); its stderr (progress, Redocly's notice that Node 20 support ends)
// is shown only when it made no report.
function run(bin, args, extraEnv = {}) {
  try {
    return execFileSync(join("node_modules", ".bin", bin), args, {
      env: { ...env, ...extraEnv }, encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    if (/^\s*[[{]/.test(e.stdout ?? "")) return e.stdout;
    process.stderr.write(e.stderr ?? "");
    throw new Error(`${bin} ${args.join(" ")} made no report (exit ${e.status})`);
  }
}

const under = (p, note) => note === "" || p === note || p.startsWith(note + "/");

const { notes, problems } = readNotes();
let failed = problems.length > 0;
for (const p of problems) say("x-lint: " + p);

// stale lists the notes' reasons whose rules (of one linter) find nothing
// under their node: such a reason no longer holds there.
function stale(prefix, found) {
  const out = [];
  for (const n of notes) {
    const byReason = new Map();
    for (const { rule, reason } of n.rules) {
      if (rule.startsWith("redocly/") !== (prefix === "redocly/")) continue;
      const name = prefix ? rule.slice(prefix.length) : rule;
      const hit = found.some((f) => f.rule === name && under(f.pointer, n.pointer));
      byReason.set(reason, (byReason.get(reason) ?? false) || hit);
    }
    for (const [reason, hit] of byReason) {
      if (!hit) out.push(`#${n.pointer}: x-lint ${reason}: none of its rules finds anything there now; remove it from the note`);
    }
  }
  return out;
}

// Spectral, with the notes (the verdict) and without (what they turn off).
const severities = ["error", "warning", "info", "hint"];
const spectral = (raw) =>
  JSON.parse(run("spectral", ["lint", "-q", "-r", ".spectral.mjs", "-f", "json", documentPath], raw ? { LINT_CONTRACT_RAW: "1" } : {}) || "[]")
    .map((r) => ({ rule: r.code, severity: severities[r.severity], pointer: pointer(r.path), line: r.range.start.line + 1, message: r.message }));
const sFound = spectral(false), sRaw = spectral(true);
const sLeft = sFound.filter((r) => r.severity === "error" || r.severity === "warning");
for (const r of sLeft) say(`spectral ${r.severity} ${r.rule} at ${documentPath}:${r.line} (#${r.pointer}): ${r.message}`);
const sStale = stale("", sRaw);
for (const s of sStale) say("spectral: " + s);
const count = (rs, sev) => rs.filter((r) => r.severity === sev).length;
say(`spectral (spectral:oas, OWASP API Security): ${count(sFound, "error")} errors, ${count(sFound, "warning")} warnings` +
  ` (without the x-lint notes: ${count(sRaw, "error")} errors, ${count(sRaw, "warning")} warnings)`);
failed ||= sLeft.length > 0 || sStale.length > 0;

// Redocly: first without the notes; then again with an ignore file (beside a
// copy of redocly.yaml) that lists each finding a note's Redocly rule covers,
// by its exact pointer, as Redocly's ignore file must.
const dir = mkdtempSync(join(tmpdir(), "lint-contract-"));
try {
  const doc = resolve(documentPath);
  const redocly = (config) =>
    JSON.parse(run("redocly", ["lint", "--config", config, "--format=json", doc])).problems
      .map((p) => ({ rule: p.ruleId, severity: p.severity === "warn" ? "warning" : p.severity, ignored: p.ignored,
        at: p.location?.[0]?.pointer ?? "#", pointer: decodeURIComponent((p.location?.[0]?.pointer ?? "#").slice(1)),
        line: p.location?.[0]?.start?.line, message: p.message }));
  const rRaw = redocly("redocly.yaml");
  const ignores = {};
  for (const f of rRaw) {
    const covered = notes.some((n) => n.rules.some((r) => r.rule === "redocly/" + f.rule) && under(f.pointer, n.pointer));
    if (covered) (ignores[f.rule] ??= []).push(f.at);
  }
  writeFileSync(join(dir, "redocly.yaml"), readFileSync("redocly.yaml"));
  const lines = [relative(dir, doc) + ":"];
  for (const [rule, ptrs] of Object.entries(ignores)) lines.push(`  ${rule}:`, ...ptrs.map((p) => `    - '${p}'`));
  if (Object.keys(ignores).length) writeFileSync(join(dir, ".redocly.lint-ignore.yaml"), lines.join("\n") + "\n");
  const rFound = redocly(join(dir, "redocly.yaml")).filter((p) => !p.ignored);
  for (const r of rFound) say(`redocly ${r.severity} ${r.rule} at ${documentPath}:${r.line} (#${r.pointer}): ${r.message}`);
  const rStale = stale("redocly/", rRaw);
  for (const s of rStale) say("redocly: " + s);
  say(`redocly (recommended): ${count(rFound, "error")} errors, ${count(rFound, "warning")} warnings` +
    ` (without the x-lint notes: ${count(rRaw, "error")} errors, ${count(rRaw, "warning")} warnings)`);
  failed ||= rFound.length > 0 || rStale.length > 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (failed) {
  say("FAILED: fix each finding above, or name an x-lint reason (components.x-lint-reasons) on the node that says why the rule cannot hold there");
  process.exit(1);
}
say("ok");
