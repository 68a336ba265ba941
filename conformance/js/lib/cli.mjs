// The command line of the JavaScript implementation: the reference CLI's `validate | resume |
// migrate | recover` with the same exit codes (0 ok, 1 invalid or refused, 2 usage, 3 internal)
// and the same JSON output shapes (--format json), plus the write moments `init | start |
// checkpoint | complete | skip | decide | finding | transition` (JSON shaped as the reference's).
// Messages are this implementation's own; codes are the protocol's. It reads no config file:
// --root defaults to the working directory and --workflow to the state's own, else apex.

import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { briefingText } from "./briefingtext.mjs";
import { readJsonBytes } from "./jsonstrict.mjs";
import { LockError } from "./lock.mjs";
import { readLease, STATE } from "./session.mjs";
import { migrateDir, recoverDir, resumeDir } from "./operations.mjs";
import { jsonPatch } from "./patch.mjs";
import { parseNow } from "./timestamps.mjs";
import { validateReport } from "./validate.mjs";
import { CURRENT } from "./versions.mjs";
import { loadWorkflow, WorkflowError } from "./workflow.mjs";
import * as W from "./write.mjs";

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 3;

const require = createRequire(import.meta.url);
const CODES = require("./codes.json");
const VERSION = require("../package.json").version;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

class UsageError extends Error {}

/** @typedef {{code: string, message?: string, file?: string, pointer?: string, line?: number|null, column?: number|null}} Found */

/** A diagnostic as the reference prints it in JSON. @param {Found} d */
export function diagnostic(d) {
  const entry = /** @type {any} */ (CODES)[d.code] ?? {};
  return {
    code: d.code,
    severity: entry.severity ?? "error",
    message: d.message ?? entry.summary ?? "",
    file: d.file ?? "",
    pointer: d.pointer ?? "",
    line: d.line ?? null,
    column: d.column ?? null,
    hint: entry.fix ?? "",
  };
}

const emit = (/** @type {unknown} */ value) => process.stdout.write(JSON.stringify(value, null, 2) + "\n");
const rel = (/** @type {string} */ p) => relative(process.cwd(), p) || ".";

/** @param {ReturnType<typeof diagnostic>[]} diags @param {NodeJS.WritableStream} [stream] */
function printDiagnostics(diags, stream = process.stderr) {
  for (const d of diags) {
    const where = [d.file, d.line ?? null, d.column ?? null].filter((x) => x !== null && x !== "").join(":");
    stream.write(`${where ? `${where}: ` : ""}${d.severity} ${d.code} ${d.message}${d.pointer ? ` (at ${d.pointer})` : ""}\n`);
  }
}

/** @param {string | undefined} value */
function nowFrom(value) {
  if (value === undefined) return Date.now() * 1000;
  try {
    return parseNow(value);
  } catch {
    throw new UsageError(`--now: ${JSON.stringify(value)} is not an RFC 3339 timestamp with a timezone`);
  }
}

/** A state file's directory, or the directory itself. @param {string} p */
function sessionDirOf(p) {
  if (basename(p).startsWith(STATE)) {
    try {
      if (!statSync(p).isDirectory()) return dirname(p);
    } catch {
      return dirname(p);
    }
  }
  return p;
}

const COMMON = {
  format: { type: "string", default: "text" },
  now: { type: "string" },
  root: { type: "string" },
};

/** @param {string[]} argv @param {Record<string, any>} options */
function parse(argv, options) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(/** @type {Error} */ (err).message);
  }
  const v = /** @type {Record<string, any>} */ (parsed.values);
  if (!["text", "json"].includes(v.format)) throw new UsageError(`--format: choose text or json, not ${JSON.stringify(v.format)}`);
  return { values: v, positionals: parsed.positionals };
}

// --- validate, resume, migrate, recover ------------------------------------------------------

/**
 * The diagnostics of one code found in a file: a duplicate key (SR121) once per duplicate,
 * with its line and column (what the strict reader keeps its offsets for); others once.
 * @param {string} code @param {string} path
 */
function located(code, path) {
  const file = rel(path);
  if (code !== "SR121") return [diagnostic({ code, file })];
  let text = null;
  let dups = [];
  try {
    const parsed = readJsonBytes(readFileSync(path));
    text = parsed.text;
    dups = parsed.duplicateAt ?? [];
  } catch {
    // unreadable now: report the code without a place
  }
  if (text === null || !dups.length) return [diagnostic({ code, file })];
  return dups.map((/** @type {{key: string, offset: number}} */ d) => {
    const before = text.slice(0, d.offset);
    const line = before.split("\n").length;
    const column = d.offset - before.lastIndexOf("\n");
    return diagnostic({ code, file, line, column, message: `duplicate key ${JSON.stringify(d.key)}` });
  });
}

/** @param {string[]} argv */
function cmdValidate(argv) {
  const { values: v, positionals } = parse(argv, {
    workflow: { type: "string" },
    strict: { type: "boolean", default: false },
    "check-artifacts": { type: "boolean", default: false },
    "max-size": { type: "string" },
  });
  const root = resolve(v.root ?? ".");
  const paths = positionals.length ? positionals : [join(root, "agent-output")];
  const missing = paths.filter((p) => {
    try { lstatSync(p); return false; } catch { return true; }
  });
  if (missing.length) {
    printDiagnostics(missing.map((p) => diagnostic({ code: "SR100", message: "no such file or directory", file: p })));
    return EXIT_USAGE;
  }
  if (v.workflow) {
    try {
      loadWorkflow(v.workflow);
    } catch (err) {
      if (!(err instanceof WorkflowError)) throw err;
      printDiagnostics(err.codes.map((code) => diagnostic({ code, message: err.message, file: v.workflow })));
      return EXIT_USAGE;
    }
  }
  const maxSize = v["max-size"] === undefined ? undefined : Number(v["max-size"]);
  if (maxSize !== undefined && !(Number.isInteger(maxSize) && maxSize > 0)) throw new UsageError("--max-size: a positive number of bytes");
  const now = nowFrom(v.now);
  const files = paths.flatMap((p) => validateReport(p, { workflow: v.workflow, now, root, maxSize, checkArtifacts: v["check-artifacts"] }));
  const ok = (/** @type {any} */ f) => !f.codes.some((/** @type {string} */ c) => ["error", ...(v.strict ? ["warning"] : [])].includes(diagnostic({ code: c }).severity));
  const reports = files.map((f) => ({
    path: rel(f.path),
    valid: ok(f),
    schema_version: f.version,
    workflow: f.workflow,
    diagnostics: f.codes.flatMap((/** @type {string} */ code) => located(code, f.path)),
  }));
  const all = reports.flatMap((r) => r.diagnostics);
  const valid = reports.every((r) => r.valid);
  if (v.format === "json") {
    emit({
      report_version: 1,
      tool: "session-resume",
      valid,
      summary: {
        files: reports.length,
        valid: reports.filter((r) => r.valid).length,
        invalid: reports.filter((r) => !r.valid).length,
        errors: all.filter((d) => d.severity === "error").length,
        warnings: all.filter((d) => d.severity === "warning").length,
      },
      files: reports,
    });
  } else {
    for (const r of reports) {
      process.stdout.write(`${r.path}: ${r.valid ? "valid" : "invalid"}\n`);
      printDiagnostics(r.diagnostics, process.stdout);
    }
    process.stdout.write(`${reports.length} file(s), ${reports.filter((r) => !r.valid).length} invalid\n`);
  }
  return valid ? EXIT_OK : EXIT_INVALID;
}

/** @param {string[]} argv */
function cmdResume(argv) {
  const { values: v, positionals } = parse(argv, {
    step: { type: "string" },
    workflow: { type: "string" },
    session: { type: "string" },
    "stale-after": { type: "string" },
  });
  if (positionals.length !== 1) throw new UsageError("resume takes one DIR");
  const dir = sessionDirOf(positionals[0]);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    return fail([diagnostic({ code: "SR100", message: "no such session directory", file: dir })], EXIT_USAGE, v.format, false);
  }
  const stale = v["stale-after"] === undefined ? 300 : Number(v["stale-after"]);
  if (!Number.isInteger(stale) || stale < 0) throw new UsageError("--stale-after: a whole number of seconds");
  const sent = readLease(dir).lease;
  let decision;
  try {
    decision = resumeDir(dir, {
      now: nowFrom(v.now),
      root: resolve(v.root ?? "."),
      step: v.step ?? null,
      workflow: v.workflow ?? null,
      session: v.session ?? process.env.SESSION_RESUME_SESSION ?? null,
      staleSeconds: stale,
      ownerAlive: W.ownerAlive(sent),
    });
  } catch (err) {
    if (err instanceof WorkflowError) return fail(err.codes.map((code) => diagnostic({ code, message: err.message })), EXIT_USAGE, v.format, false);
    throw err;
  }
  decision.session_dir = dir;
  // decision version 2: commands (and alternatives) are {run, when} objects
  for (const key of ["commands", "alternatives"]) {
    if (!Array.isArray(decision[key])) continue;
    decision[key] = decision[key].map((/** @type {any} */ c) =>
      typeof c === "string" ? runnable(c, dir, v.root) : { ...c, run: runnable(c.run, dir, v.root) },
    );
  }
  if (v.format === "json") emit(decision);
  else {
    process.stdout.write(`action: ${decision.action}\n`);
    if (decision.step) process.stdout.write(`step: ${decision.step}${decision.step_name ? ` (${decision.step_name})` : ""}\n`);
    if (decision.sub_step) process.stdout.write(`resume after checkpoint: ${decision.sub_step}\n`);
    if (decision.next_step) process.stdout.write(`next step: ${decision.next_step}\n`);
    for (const line of briefingText(decision.briefing)) process.stdout.write(`${line}\n`);
    for (const r of /** @type {any[]} */ ([...decision.reasons, ...decision.warnings])) {
      const code = typeof r === "string" ? r : r.code;
      const message = typeof r === "string" ? (/** @type {any} */ (CODES)[code]?.summary ?? "") : r.message;
      process.stdout.write(`${code} ${message}\n`);
    }
    for (const c of /** @type {any[]} */ (decision.commands)) {
      process.stdout.write(typeof c === "string" ? `run: ${c}\n` : `run [${c.when}]: ${c.run}\n`);
    }
  }
  return EXIT_OK;
}

const WRITERS = ["start", "checkpoint", "complete", "skip", "session", "init", "review-audit"];
const quote = (/** @type {string} */ s) => (/^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\"'\"'")}'`);

/** The decision's command templates made runnable for `dir`, as the reference does. @param {string} command @param {string} dir @param {string | undefined} [root] */
function runnable(command, dir, root) {
  let out = command.replaceAll(" DIR", ` ${quote(dir)}`);
  const parts = out.split(/\s+/);
  // init names its project (PROJECT), not a session directory
  // a command that already names its session (--project, --session-dir: decision 2) keeps it
  const named = parts.includes("--project") || parts.includes("--session-dir");
  if (parts.length > 1 && WRITERS.includes(parts[1]) && parts[1] !== "init" && !named) out += ` --session-dir ${quote(dir)}`;
  // the --root the call was given: the command runs as printed from where the user stands
  if (root !== undefined && !parts.includes("--root")) out += ` --root ${quote(root)}`;
  return out;
}

/** @param {string[]} argv */
function cmdMigrate(argv) {
  const { values: v, positionals } = parse(argv, {
    "dry-run": { type: "boolean", default: false },
    check: { type: "boolean", default: false },
    salvage: { type: "boolean", default: false },
    workflow: { type: "string" },
  });
  if (!positionals.length) throw new UsageError("migrate needs PATH|DIR");
  if (v["dry-run"] && v.check) throw new UsageError("--dry-run and --check exclude each other");
  const root = resolve(v.root ?? ".");
  const now = nowFrom(v.now);
  const write = !(v["dry-run"] || v.check);
  /** @type {ReturnType<typeof diagnostic>[]} */
  const problems = [];
  const outcomes = [];
  for (const p of positionals) {
    const found = validateReport.discover(p);
    if (!found.files.length) problems.push(diagnostic({ code: found.codes[0] ?? "SR100", file: p }));
    for (const f of found.files) {
      const dir = sessionDirOf(f);
      const res = migrateDir(dir, { now, root, workflow: v.workflow ?? null, dryRun: !write, salvage: v.salvage });
      const status = res.status === "migrated" && !write ? "would_migrate" : res.status;
      const file = rel(join(dir, STATE));
      // the migration's own notes carry messages (SR152 names --salvage); a store refusal only codes
      const noted = new Set((res.notes ?? []).map((n) => n.code));
      outcomes.push({
        path: file,
        status,
        from_version: res.from ?? null,
        patch: res.original && res.document ? jsonPatch(res.original, res.document) : [],
        notes: [
          ...(res.notes ?? []).map((n) => diagnostic({ code: n.code, message: n.message, pointer: n.pointer, file })),
          ...res.codes.filter((code) => !noted.has(code)).map((code) => diagnostic({ code, file })),
        ],
      });
    }
  }
  if (v.format === "json") emit({ files: outcomes, problems });
  else {
    printDiagnostics(problems, process.stdout);
    for (const o of outcomes) {
      process.stdout.write(`${o.path}: ${o.status}${o.from_version ? ` (from ${o.from_version})` : ""}\n`);
      printDiagnostics(o.notes, process.stdout);
    }
  }
  const refused = problems.length > 0 || outcomes.some((o) => o.status === "refused" || o.notes.some((d) => d.severity === "error"));
  if (v.check) return refused || outcomes.some((o) => o.status === "would_migrate") ? EXIT_INVALID : EXIT_OK;
  return refused ? EXIT_INVALID : EXIT_OK;
}

/** @param {string[]} argv */
function cmdRecover(argv) {
  const { values: v, positionals } = parse(argv, { workflow: { type: "string" }, project: { type: "string" } });
  if (positionals.length !== 1) throw new UsageError("recover takes one DIR");
  const dir = sessionDirOf(positionals[0]);
  const res = recoverDir(dir, { now: nowFrom(v.now), root: resolve(v.root ?? "."), workflow: v.workflow ?? null, project: v.project ?? null });
  const file = join(dir, STATE);
  if (res.status === "refused") return fail(res.codes.map((code) => diagnostic({ code, file })), EXIT_INVALID, v.format, false);
  const found = res.codes.filter((c) => c !== "SR505").map((code) => diagnostic({ code, file }));
  const problems = res.codes.filter((c) => c === "SR505").map((code) => diagnostic({ code, file: join(dir, "00-worklog.jsonl") }));
  const action = res.status === "none" ? "none" : res.status;
  // why the .bak could not be restored (docs/spec.md §5), as the reference reports it
  const backupProblems = (res.backupProblems ?? []).map((code) => diagnostic({ code, file: `${file}.bak` }));
  if (v.format === "json") {
    emit({
      action,
      corrupt_kept_as: res.keptAs ?? null,
      migrated_from: res.migratedFrom ?? null,
      found,
      backup_problems: backupProblems,
      problems,
    });
  } else {
    const migrated = res.migratedFrom ? ` (a ${res.migratedFrom} state, migrated to ${CURRENT})` : "";
    const unusable = backupProblems.map((d) => `${d.code} ${d.message}`).join("; ");
    const msg = /** @type {Record<string, string>} */ ({
      none: "the state file is readable; nothing to recover",
      restored_backup: `restored 00-session-state.json from .bak${migrated}`,
      recreated: `no usable .bak: created a fresh state (every step pending)${unusable ? ` (the .bak is not usable: ${unusable})` : ""}`,
    })[action];
    process.stdout.write(`${positionals[0]}: ${msg}\n`);
    if (res.keptAs) process.stdout.write(`  the corrupt file is kept as ${res.keptAs}\n`);
    if (action !== "none") printDiagnostics(found, process.stdout);
    printDiagnostics(problems);
  }
  return problems.length ? EXIT_INVALID : EXIT_OK;
}

// --- the write moments -------------------------------------------------------------------

const SESSION_OPTIONS = {
  "session-dir": { type: "string" },
  project: { type: "string" },
  session: { type: "string" },
};

/** @param {Record<string, any>} v @param {string|null} [project] */
function context(v, project = null) {
  const root = resolve(v.root ?? ".");
  const session = v.session ?? process.env.SESSION_RESUME_SESSION ?? null;
  if (session !== null && !SESSION_ID.test(session)) {
    throw new UsageError(`--session: ${JSON.stringify(session)} is not a session id (letters, digits and . _ : @ -, at most 128 characters)`);
  }
  if (v["session-dir"] && v.project && project === null) throw new UsageError("--session-dir and --project exclude each other");
  const name = project ?? v.project ?? null;
  let dir;
  if (v["session-dir"]) dir = sessionDirOf(v["session-dir"]);
  else if (name) {
    if (!PROJECT.test(name)) throw new UsageError(`project name ${JSON.stringify(name)} is not allowed (letters, digits, \`.\`, \`_\`, \`-\`, starting with a letter or digit)`);
    const wf = loadWorkflow(v.workflow ?? "apex");
    dir = join(root, wf.sessionDir.replace("{project}", name));
  } else throw new UsageError("give the session with --session-dir DIR or --project NAME");
  return { dir: resolve(dir), now: nowFrom(v.now), root, session };
}

/** @param {W.WriteResult} res @param {string} format @param {string} text */
function emitWrite(res, format, text) {
  if (format === "json") {
    const step = res.step !== null && res.document.steps && typeof res.document.steps[res.step] === "object"
      ? { key: res.step, ...res.document.steps[res.step] } : null;
    /** @type {Record<string, unknown>} */
    const out = { ok: true, revision: res.revision, step, event: res.event, events: res.events, session: res.session, lease: res.lease };
    if (res.previousSession !== null) out.previous_session = res.previousSession;
    emit(out);
    return EXIT_OK;
  }
  if (res.lease === "takeover") process.stdout.write(`took over the lease of session ${res.previousSession} (logged); this is session ${res.session}\n`);
  else if (res.lease === "create") process.stdout.write(`started session ${res.session} (lease 00-session.active)\n`);
  process.stdout.write(`${text} (revision ${res.revision})\n`);
  return EXIT_OK;
}

/** @type {Record<string, (argv: string[]) => number>} */
const WRITE_COMMANDS = {
  init(argv) {
    const { values: v, positionals } = parse(argv, { ...SESSION_OPTIONS, workflow: { type: "string" } });
    if (positionals.length !== 1) throw new UsageError("init takes one PROJECT");
    return guarded(v.format, () => {
      const ctx = context(v, positionals[0]);
      const res = W.init(ctx, positionals[0], { workflow: v.workflow ?? null });
      return emitWrite(res, v.format, `initialised ${join(ctx.dir, STATE)} (project ${positionals[0]})`);
    });
  },
  start(argv) {
    const { values: v, positionals } = parse(argv, { ...SESSION_OPTIONS, force: { type: "boolean", default: false }, name: { type: "string" } });
    if (positionals.length !== 1) throw new UsageError("start takes one STEP");
    return guarded(v.format, () => emitWrite(W.startStep(context(v), positionals[0], { force: v.force, name: v.name ?? null }), v.format, `step ${positionals[0]}: in_progress`));
  },
  checkpoint(argv) {
    const { values: v, positionals } = parse(argv, { ...SESSION_OPTIONS, artifact: { type: "string", multiple: true, default: [] }, "context-file": { type: "string", multiple: true, default: [] } });
    if (positionals.length !== 2) throw new UsageError("checkpoint takes STEP SUB_STEP");
    return guarded(v.format, () => emitWrite(W.checkpointStep(context(v), positionals[0], positionals[1], { artifacts: v.artifact, contextFiles: v["context-file"] }), v.format, `step ${positionals[0]}: checkpoint ${positionals[1]}`));
  },
  complete(argv) {
    const { values: v, positionals } = parse(argv, SESSION_OPTIONS);
    if (positionals.length !== 1) throw new UsageError("complete takes one STEP");
    return guarded(v.format, () => emitWrite(W.completeStep(context(v), positionals[0]), v.format, `step ${positionals[0]}: complete`));
  },
  skip(argv) {
    const { values: v, positionals } = parse(argv, { ...SESSION_OPTIONS, reason: { type: "string" }, force: { type: "boolean", default: false } });
    if (positionals.length !== 1) throw new UsageError("skip takes one STEP");
    if (v.reason === undefined) throw new UsageError("skip needs --reason");
    return guarded(v.format, () => emitWrite(W.skipStep(context(v), positionals[0], v.reason, { force: v.force }), v.format, `step ${positionals[0]}: skipped`));
  },
  decide(argv) {
    const { values: v, positionals } = parse(argv, {
      ...SESSION_OPTIONS, log: { type: "boolean", default: false }, title: { type: "string" }, choice: { type: "string" },
      rationale: { type: "string" }, step: { type: "string" }, alternative: { type: "string", multiple: true, default: [] },
    });
    if (v.log) {
      if (positionals.length) throw new UsageError("decide --log takes no KEY VALUE (use --title, --choice, --rationale)");
      const missing = ["title", "choice", "rationale"].filter((o) => !v[o]);
      if (missing.length) throw new UsageError(`decide --log needs ${missing.map((m) => `--${m}`).join(", ")}`);
      return guarded(v.format, () => emitWrite(W.logDecision(context(v), { title: v.title, choice: v.choice, rationale: v.rationale, step: v.step ?? null, alternatives: v.alternative }), v.format, `decision logged: ${v.title} → ${v.choice}`));
    }
    if (positionals.length !== 2) throw new UsageError("decide needs KEY VALUE, or --log --title T --choice C --rationale R");
    if (v.title || v.choice || v.rationale || v.step || v.alternative.length) throw new UsageError("--title, --choice, --rationale, --step and --alternative go with --log");
    return guarded(v.format, () => emitWrite(W.decide(context(v), positionals[0], positionals[1]), v.format, `decision ${positionals[0]} = ${positionals[1]}`));
  },
  finding(argv) {
    const [action, ...rest] = argv;
    if (action !== "add" && action !== "resolve") throw new UsageError("finding takes add or resolve, then TITLE");
    const { values: v, positionals } = parse(rest, SESSION_OPTIONS);
    if (positionals.length !== 1) throw new UsageError(`finding ${action} takes one TITLE`);
    return guarded(v.format, () => emitWrite(W.finding(context(v), action, positionals[0]), v.format, `finding ${action === "add" ? "added" : "resolved"}: ${positionals[0]}`));
  },
  transition(argv) {
    const { values: v, positionals } = parse(argv, {
      ...SESSION_OPTIONS, complete: { type: "string" }, start: { type: "string" }, decision: { type: "string", multiple: true, default: [] }, force: { type: "boolean", default: false },
    });
    if (positionals.length || !v.complete || !v.start) throw new UsageError("transition needs --complete A --start B");
    /** @type {Record<string, string>} */
    const decisions = {};
    for (const item of v.decision) {
      const at = item.indexOf("=");
      if (at <= 0) throw new UsageError(`--decision ${JSON.stringify(item)}: expected KEY=VALUE`);
      decisions[item.slice(0, at)] = item.slice(at + 1);
    }
    return guarded(v.format, () => emitWrite(W.transition(context(v), v.complete, v.start, decisions, { force: v.force }), v.format, `step ${v.complete}: complete; step ${v.start}: in_progress`));
  },
};

/** Refusals: coded diagnostics on stderr (text) or {"ok": false, ...} on stdout (json). @param {string} format @param {() => number} fn */
function guarded(format, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof W.WriteError || err instanceof WorkflowError || err instanceof LockError) {
      const problems = err instanceof W.WriteError ? err.problems : err.codes.map((code) => ({ code, message: err.message }));
      return fail(problems.map((p) => diagnostic(p)), err instanceof WorkflowError ? EXIT_USAGE : err instanceof W.WriteError ? err.exitCode : EXIT_INVALID, format, true);
    }
    throw err;
  }
}

/** @param {ReturnType<typeof diagnostic>[]} diags @param {number} code @param {string} format @param {boolean} jsonOnStdout */
function fail(diags, code, format, jsonOnStdout) {
  if (format === "json" && jsonOnStdout) emit({ ok: false, diagnostics: diags });
  else printDiagnostics(diags);
  return code;
}

const COMMANDS = { validate: cmdValidate, resume: cmdResume, migrate: cmdMigrate, recover: cmdRecover, ...WRITE_COMMANDS };

const USAGE = `usage: session-resume COMMAND [options]

The session-resume protocol in JavaScript (npm package session-resume).

commands:
  validate [PATH...]   check state files (schema, semantic and workflow rules)
  resume DIR           decide how to resume: the action, step, checkpoint, files to skip
  migrate PATH...      migrate state files to the current schema (--dry-run, --check,
                       --salvage: resolve contradictions, displaced values kept in x-legacy)
  recover DIR          restore a corrupt state from .bak, or recreate it fresh
  init PROJECT         create the session's state from the workflow template
  start STEP | checkpoint STEP SUB_STEP | complete STEP | skip STEP --reason R
  decide KEY VALUE | decide --log --title T --choice C --rationale R
  finding add|resolve TITLE | transition --complete A --start B [--decision K=V]

common options: --format text|json, --now TIMESTAMP, --root DIR; writers: --session-dir DIR
or --project NAME, --session ID. Exit codes: 0 ok, 1 invalid or refused, 2 usage, 3 internal.
`;

/** Run the CLI; returns the exit code (never throws). @param {string[]} argv */
export function main(argv) {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help") {
    process.stdout.write(USAGE);
    return command === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (command === "--version") {
    process.stdout.write(`session-resume (JavaScript) ${VERSION}\n`);
    return EXIT_OK;
  }
  const fn = /** @type {Record<string, (argv: string[]) => number>} */ (COMMANDS)[command];
  if (!fn) {
    process.stderr.write(`session-resume: error: unknown command ${JSON.stringify(command)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  try {
    return fn(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`session-resume: error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    const e = /** @type {any} */ (err);
    process.stderr.write(`session-resume: SR900 internal error: ${e && e.name}: ${e && e.message}\nThis is a bug; please report it with the command you ran.\n`);
    if (process.env.SESSION_RESUME_DEBUG) process.stderr.write(`${e && e.stack}\n`);
    return EXIT_INTERNAL;
  }
}

