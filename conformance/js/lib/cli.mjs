// The command line of the JavaScript implementation: the reference CLI's `validate | resume |
// migrate | recover` with the same exit codes (0 ok, 1 invalid or refused, 2 usage, 3 internal)
// and the same JSON output shapes (--format json), plus the write moments `init | start |
// checkpoint | complete | skip | decide | finding | transition` (lib/cli/write.mjs, JSON shaped
// as the reference's), `review-audit` (lib/cli/review.mjs) and the session's lease, `session
// start|end | ping` (lib/cli/session.mjs): each command group a module given this one's `KIT`.
// Codes are the protocol's; the text summaries (resume's answer, the writers' lines, validate's
// options and reports, the validator's findings with their words and places, the writers'
// warnings) are the reference's byte for byte, ported one to one (plantext.mjs,
// resumemessages.mjs, findings.mjs, locate.mjs). It reads the project configuration as the
// reference does (config.mjs): `.session-resume.yaml` or `[tool.session-resume]` in
// pyproject.toml, each setting with the command-line option's precedence, a bad file refused
// (exit 2) with the reference's code, words and place.

import { randomBytes } from "node:crypto";
import { existsSync, readSync, statSync } from "node:fs";
import { lexists, readLimited } from "./files.mjs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CODES, VERSION } from "./codes.mjs";
import {
  absoluteUrl,
  ConfigError,
  configNear,
  findRoot,
  loadConfig,
  realOrAbsolute,
  reEscape,
  sessionRootDir,
  stateWorkflowSpec,
} from "./config.mjs";
import { ownerAlive } from "./lease.mjs";
import { LockError } from "./lock.mjs";
import { readLease, SESSION_ID, STATE, WORKLOG } from "./session.mjs";
import { migrateDir, recoverDir, resumeDir } from "./operations.mjs";
import { INIT } from "./resume.mjs";
import { unifiedDiff, splitLines } from "./difflib.mjs";
import { jsonPatch, orderLike, pyDumps } from "./patch.mjs";
import { isWriter, shellQuote } from "./plan.mjs";
import { cleanTree, planText } from "./plantext.mjs";
import {
  clean,
  cleanLines,
  renderGithub,
  renderSarif,
  renderText,
  reportJson,
} from "./reporters.mjs";
import { parseNow } from "./timeutil.mjs";
import { NO_STATE_UNDER, validateBytesReport, validateReport } from "./validate.mjs";
import { globRegex, kept, repoPath } from "./selection.mjs";
import { CURRENT } from "./versions.mjs";
import { builtins, loadWorkflow, WorkflowError } from "./workflow.mjs";
import * as W from "./write.mjs";
import { reviewCommands } from "./cli/review.mjs";
import { sessionCommands } from "./cli/session.mjs";
import { writeCommands } from "./cli/write.mjs";

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 3;

const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

class UsageError extends Error {}

/** @typedef {{code: string, message?: string, file?: string, pointer?: string, line?: number|null,
 *   column?: number|null, hint?: string, severity?: string}} Found */

/** The reference reader's words for the read errors whose message names nothing of the file
 * (core/jsonread.py). @type {Record<string, {message: string, line?: number, column?: number}>} */
const READ_WORDS = {
  SR110: { message: "the file is empty (0 bytes)" },
  SR111: { message: "the file holds only whitespace" },
  SR113: { message: "the file starts with a UTF-8 byte order mark", line: 1, column: 1 },
};

/** A diagnostic as the reference prints it in JSON. @param {Found} d */
export function diagnostic(d) {
  const entry = CODES[d.code];
  // the reference's own words (and place) for a finding whose text does not depend on the file
  const fixed = READ_WORDS[d.code];
  return {
    code: d.code,
    severity: d.severity ?? entry?.severity ?? "error",
    message: d.message ?? fixed?.message ?? entry?.summary ?? "",
    file: d.file ?? "",
    pointer: d.pointer ?? "",
    line: d.line ?? fixed?.line ?? null,
    column: d.column ?? fixed?.column ?? null,
    hint: d.hint || entry?.fix || "",
  };
}

// Characters JSON leaves raw in a string but that break or reorder a line where the text is
// shown: the line and paragraph separators and the bidi controls (as \uNNNN), as the reference.
const JSON_RAW = /[\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const emit = (/** @type {unknown} */ value) =>
  process.stdout.write(
    `${JSON.stringify(value, null, 2).replace(JSON_RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}\n`,
  );
const rel = (/** @type {string} */ p) => relative(process.cwd(), p) || ".";

/** The reference's `here_relative`: every absolute path inside the repository the current
 * directory is in, written relative to its root (one path style; a relative session
 * directory is looked up under the root first, so a command it names still runs as printed).
 * @param {string} text */
function hereRelative(text) {
  if (typeof text !== "string" || !text.includes("/")) return text;
  let d = process.cwd();
  for (;;) {
    if (existsSync(join(d, ".git")) || existsSync(join(d, ".session-resume.yaml"))) break;
    const up = dirname(d);
    if (up === d) return text;
    d = up;
  }
  if (d === "/") return text;
  const prefix = `${d.replace(/\/+$/, "")}/`;
  return text.split(prefix).join("");
}

/** Diagnostics as the reference prints notes and refusals: its text report's lines, grouped
 * by file, without the summary line. @param {ReturnType<typeof diagnostic>[]} diags
 * @param {NodeJS.WritableStream} [stream] */
function printDiagnostics(diags, stream = process.stderr) {
  if (!diags.length) return;
  diags = diags.map((d) => ({
    ...d,
    file: hereRelative(d.file),
    message: hereRelative(d.message),
    hint: hereRelative(d.hint),
  }));
  /** @type {Map<string, ReturnType<typeof diagnostic>[]>} */
  const byFile = new Map();
  for (const d of diags) byFile.set(d.file, [...(byFile.get(d.file) ?? []), d]);
  const reports = [...byFile].map(([path, ds]) => ({
    path,
    valid: true,
    schema_version: null,
    workflow: null,
    diagnostics: ds,
  }));
  const lines = renderText(reports).split("\n").slice(0, -2);
  stream.write(`${lines.join("\n")}\n`);
}

// --- naming a session: the reference's one rule (docs/config.md) -----------------------------
//
// A relative directory is looked up under the repository root first, then under the current
// directory (one spelled `.`, `./…` or `../…` is the current directory's); `--project NAME` is
// the workflow's session_dir pattern under the root. The repository root is `--root`, else
// found from the session directory upwards (for `--project`: from the current directory).

/** @param {string} arg */
const explicitlyRelative = (arg) => [".", ".."].includes(arg) || /^\.\.?[\\/]/.test(arg);

/** @param {string} a @param {string} b */
function sameFile(a, b) {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** `arg` as the command uses it (the reference's `resolve_path`). @param {string} arg @param {string | undefined} rootArg */
export function resolvePath(arg, rootArg) {
  if (isAbsolute(arg) || explicitlyRelative(arg)) return arg;
  const base = rootArg ? realOrAbsolute(rootArg) : findRoot(process.cwd());
  const underRoot = join(base, arg);
  if (!lexists(underRoot)) return arg;
  if (lexists(arg) && sameFile(underRoot, arg)) return arg;
  return rel(underRoot);
}

/** @param {string} name */
function checkProject(name) {
  if (!PROJECT.test(name))
    throw new UsageError(
      `--project: ${JSON.stringify(name)} is not a project name (letters, digits, \`.\`, \`_\`, \`-\`, starting with a letter or digit)`,
    );
}

/** A refusal with coded diagnostics (exit 2), reported as the reference's ServiceError. */
class Refusal extends Error {
  /** @param {Found[]} diags */
  constructor(diags) {
    super(diags.map((d) => d.message).join("; "));
    this.diags = diags;
  }
}

/**
 * The session directory of `--project NAME` under the root (the reference's `project_dir`):
 * the session_dir of `workflow` (--workflow or the configured one); when neither names one,
 * the built-in workflows' directory that holds the session (its state or .bak), refused
 * (SR185) when two do, the default workflow's when none does. `dirOption`: how the command
 * takes a directory (`--session-dir`, or null: a positional DIR), for the commands SR185 prints.
 * @param {string} name @param {string} root @param {string | null | undefined} workflow
 * @param {string | null} [dirOption]
 */
function projectDir(name, root, workflow, dirOption = null) {
  checkProject(name);
  const dirOf = (/** @type {string} */ spec) =>
    join(root, loadWorkflow(spec).sessionDir.replace("{project}", name));
  if (workflow) return dirOf(workflow);
  /** @type {Map<string, string[]>} */
  const found = new Map();
  for (const spec of ["apex", ...builtins().filter((b) => b !== "apex")])
    found.set(dirOf(spec), [...(found.get(dirOf(spec)) ?? []), spec]);
  const held = [...found].filter(
    ([d]) => lexists(join(d, STATE)) || lexists(join(d, `${STATE}.bak`)),
  );
  if (held.length === 1) return held[0][0];
  if (held.length > 1) {
    const where = held.map(([d, names]) => `${rel(d)} (${names.join(", ")})`).join(" and ");
    const runs = held.map(([d]) => `\`${withDir(rel(d), dirOption)}\``).join(" or ");
    throw new Refusal([
      {
        code: "SR185",
        message: `--project ${name} names two sessions, ${where}; name one by its directory: ${runs} (nothing was done)`,
      },
    ]);
  }
  return [...found.keys()][0];
}

/** This call's command line with `--project NAME` replaced by `directory` (the reference's
 * `_with_dir`). @param {string} directory @param {string | null} dirOption */
function withDir(directory, dirOption) {
  const words = dirOption === null ? [directory] : [dirOption, directory];
  /** @type {string[]} */
  const out = [];
  let skip = false;
  for (const w of CALL.argv) {
    if (skip) skip = false;
    else if (w === "--project") {
      out.push(...words);
      skip = true;
    } else if (w.startsWith("--project=")) out.push(...words);
    else out.push(w);
  }
  return ["session-resume", ...out].map(quote).join(" ");
}

/**
 * (configuration, repository root, session directory) of the session a command line names:
 * DIR or --project NAME (the session_dir of --workflow, else of the configured workflow).
 * @param {string | undefined} given @param {Record<string, any>} v
 * @param {string | null} [dirOption] how the command takes a directory (for SR185)
 * @returns {{cfg: import("./config.mjs").Config, root: string, dir: string}}
 */
function sessionOf(given, v, dirOption = null) {
  if (given && v.project)
    throw new UsageError("give the session directory DIR or --project NAME, not both");
  if (given) {
    const found = resolvePath(given, v.root);
    const cfg = configNear(found, v.root);
    return {
      cfg,
      root: v.root ? realOrAbsolute(v.root) : cfg.root,
      dir: resolve(sessionDirOf(found)),
    };
  }
  if (v.project) {
    checkProject(v.project);
    const cfg = loadConfig(v.root || process.cwd());
    const root = v.root ? realOrAbsolute(v.root) : cfg.root;
    return { cfg, root, dir: projectDir(v.project, root, v.workflow ?? cfg.workflow, dirOption) };
  }
  throw new UsageError("give the session directory DIR, or --project NAME");
}

/** @param {string | undefined} value */
function nowFrom(value) {
  if (value === undefined) return Date.now() * 1000;
  try {
    return parseNow(value);
  } catch {
    throw new UsageError(
      `--now: ${JSON.stringify(value)} is not an RFC 3339 timestamp with a timezone`,
    );
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

/** @typedef {Record<string, {type: "string" | "boolean", multiple?: boolean, default?: string | boolean | string[]}>} ArgOptions */

/** @type {ArgOptions} */
const COMMON = {
  format: { type: "string", default: "text" },
  now: { type: "string" },
  root: { type: "string" },
};

/** @param {string[]} argv @param {ArgOptions} options @param {string[]} [formats] */
function parse(argv, options, formats = ["text", "json"]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...COMMON, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const e = /** @type {Error & {code?: string}} */ (err);
    const unknown = /Unknown option '([^']*)'/.exec(e.message);
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown) {
      // parseArgs' own words suggest `-- "--x"`, which would pass the option as an argument
      const known = Object.keys({ ...COMMON, ...options })
        .sort()
        .map((o) => `--${o}`);
      throw new UsageError(
        `unrecognized arguments: ${unknown[1]} (this command's options: ${known.join(", ")}; \`session-resume --help\` lists the commands)`,
      );
    }
    throw new UsageError(e.message);
  }
  const v = /** @type {Record<string, any>} */ (parsed.values);
  CALL.values = v;
  if (!formats.includes(v.format))
    throw new UsageError(`--format: choose ${formats.join(", ")}, not ${JSON.stringify(v.format)}`);
  // a session directory named must exist (SR100, exit 2), but the one `init` creates
  const dir = v["session-dir"];
  if (
    typeof dir === "string" &&
    dir &&
    CALL.argv[0] !== "init" &&
    !lexists(resolvePath(dir, v.root))
  )
    throw new MissingPath(dir);
  return { values: v, positionals: parsed.positionals };
}

/** A path the command needs does not exist: SR100, exit 2 (the reference's main()). */
class MissingPath extends Error {
  /** @param {string} path */
  constructor(path) {
    super(path);
    this.path = path;
  }
}

// --- validate, resume, migrate, recover ------------------------------------------------------

const VALIDATE_FORMATS = ["text", "json", "github", "sarif"];
// the formats that print every finding's place: the validator locates each one (the
// reference's `needs_positions`); text and json locate a failing file's only
const PLACED_FORMATS = ["github", "sarif"];

/**
 * `validate --format json|sarif` refused before it checked anything (exit 2): still a report
 * of its own format that says so, as the reference writes it.
 * @param {string} format @param {ReturnType<typeof diagnostic>[]} diags @param {string | null} root
 */
function refusedValidate(format, diags, root) {
  const why = diags.map((d) => `${d.code} ${d.file ? `${d.file}: ` : ""}${d.message}`).join("; ");
  const reports = diags.map((d) => ({
    path: d.file,
    valid: false,
    schema_version: null,
    workflow: null,
    diagnostics: [d],
  }));
  if (format === "json") emit(reportJson(reports, why || "usage error"));
  else if (format === "sarif") process.stdout.write(renderSarif(reports, { root, failure: why }));
  printDiagnostics(diags);
  return EXIT_USAGE;
}

/**
 * `validate` refused by a usage error once its options were read: json and sarif still write
 * a report of their own format that says so (no file in it), as the reference does.
 * @param {string} format @param {string} message @param {string | null} root
 */
function refusedUsage(format, message, root) {
  if (format === "json") emit(reportJson([], message));
  else if (format === "sarif") process.stdout.write(renderSarif([], { root, failure: message }));
}

/** @param {string} p */
function isDirectory(p) {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** @param {string[]} argv */
function cmdValidate(argv) {
  const { values: v, positionals } = parse(
    // `-q` and `--output-format` as the reference spells them too
    validateArgv(argv),
    {
      workflow: { type: "string" },
      project: { type: "string" },
      strict: { type: "boolean", default: false },
      "check-artifacts": { type: "boolean", default: false },
      "max-size": { type: "string" },
      "docs-url": { type: "string" },
      "exit-zero": { type: "boolean", default: false },
      select: { type: "string", multiple: true },
      ignore: { type: "string", multiple: true },
      quiet: { type: "boolean", default: false },
      color: { type: "string", default: "auto" },
      "stdin-filename": { type: "string" },
    },
    VALIDATE_FORMATS,
  );
  if (!["auto", "always", "never"].includes(v.color))
    throw new UsageError(`--color: choose auto, always, never, not ${JSON.stringify(v.color)}`);
  const maxSize = v["max-size"] === undefined ? undefined : Number(v["max-size"]);
  if (maxSize !== undefined && !(Number.isInteger(maxSize) && maxSize > 0))
    throw new UsageError("--max-size: a positive number of bytes");
  try {
    return validateRun(v, positionals, maxSize);
  } catch (err) {
    // refused before anything was checked: json and sarif still write a report that says so
    if (err instanceof UsageError)
      refusedUsage(v.format, err.message, v.root ? realOrAbsolute(v.root) : null);
    throw err;
  }
}

/** @param {string[]} argv */
function validateArgv(argv) {
  return argv.map((a) =>
    a === "-q"
      ? "--quiet"
      : a === "--output-format" || a.startsWith("--output-format=")
        ? a.replace("--output-format", "--format")
        : a,
  );
}

/** @param {Record<string, any>} v @param {string[]} positionals @param {number | undefined} maxSize */
function validateRun(v, positionals, maxSize) {
  let paths;
  let root;
  let cfg;
  if (v.project) {
    if (positionals.length) throw new UsageError("give PATH|DIR or --project NAME, not both");
    const named = sessionOf(undefined, v);
    ({ root, cfg } = named);
    paths = [rel(named.dir)];
  } else {
    // the paths by the one rule, and the repository (and configuration) of the first one
    // (docs/config.md)
    paths = positionals.map((p) => (p === "-" ? p : resolvePath(p, v.root)));
    const start = paths.find((p) => p !== "-" && lexists(p));
    cfg = start ? configNear(start, v.root) : loadConfig(v.root || process.cwd());
    root = v.root ? realOrAbsolute(v.root) : cfg.root;
  }
  if (!paths.length) {
    // the configured session root, refused (SR105) when a link leads it out
    const sessionRoot = sessionRootDir(cfg, root);
    if (!isDirectory(sessionRoot)) {
      const file = rel(sessionRoot);
      return refusedValidate(
        v.format,
        [
          diagnostic({
            code: "SR100",
            message: `no PATH given and the session root ${file} does not exist`,
            file,
            hint: "Pass the state files or directories to check, or create a session first: `session-resume init PROJECT`.",
          }),
        ],
        v.root ? root : null,
      );
    }
    // relative to the current directory, as the reference's `relpath(session_root)`
    paths = [rel(sessionRoot)];
  }
  if (paths.includes("-")) return validateStdin(v, paths, root, maxSize ?? cfg.max_size, cfg);
  const missing = paths.filter((p) => !lexists(p));
  if (missing.length) {
    return refusedValidate(
      v.format,
      missing.map((p) => noSuchPath(p)),
      v.root ? root : null,
    );
  }
  const now = nowFrom(v.now);
  if (v.workflow) {
    try {
      loadWorkflow(v.workflow);
    } catch (err) {
      if (!(err instanceof WorkflowError)) throw err;
      return refusedValidate(
        v.format,
        err.diagnostics.map((d) => diagnostic({ ...d, file: d.file || v.workflow })),
        v.root ? root : null,
      );
    }
  }
  const docsUrl = docsUrlOf(v["docs-url"], cfg);
  const selection = selectionOf(v, cfg);
  /** @type {string[]} */
  const skipped = [];
  const files = paths.flatMap((p) =>
    validateReport(
      p,
      {
        workflow: v.workflow,
        defaultWorkflow: cfg.workflow,
        skew: cfg.clock_skew_seconds,
        now,
        root,
        maxSize: maxSize ?? cfg.max_size,
        checkArtifacts: v["check-artifacts"],
        strict: v.strict,
        positions: PLACED_FORMATS.includes(v.format),
      },
      skipped,
    ),
  );
  if (skipped.length && !v.quiet) noteSkipped(skipped);
  const reports = fileReports(files, v, selection, root);
  if (
    reports.length &&
    reports.every((r) => r.diagnostics.length === 1 && r.diagnostics[0].code === "SR101")
  ) {
    // nothing to check at all: a usage error (exit 2), as a missing path is
    return refusedValidate(
      v.format,
      reports.flatMap((r) => r.diagnostics),
      v.root ? root : null,
    );
  }
  return validateOutput(v, reports, root, docsUrl);
}

/** Say on standard error how many state files `.gitignore` kept out of the search, and how to
 * check one (naming its directory checks it whatever git ignores): the reference's
 * `_note_skipped`. @param {string[]} skipped */
function noteSkipped(skipped) {
  const first = rel(dirname(skipped[0]) || ".");
  const n = skipped.length;
  process.stderr.write(
    `note: ${n} git-ignored state file${n !== 1 ? "s" : ""} not checked (the search ` +
      "of a directory honours .gitignore); to check one, name its session directory: " +
      `\`session-resume validate ${shellQuote(first)}\`\n`,
  );
}

/** `--docs-url` (an absolute http(s) URL), else the configured `docs_url`, else null.
 * @param {string | undefined} value @param {import("./config.mjs").Config} cfg */
function docsUrlOf(value, cfg) {
  if (!value) return cfg.docs_url;
  if (!absoluteUrl(value))
    throw new UsageError(`--docs-url: ${pyRepr(value)} is not an absolute http(s) URL`);
  return value;
}

/**
 * The reports of the files checked: each code found placed in its file, the ones this run
 * does not select dropped, and the file's validity from what is left (the reference's order).
 * @param {import("./validate.mjs").FileReport[]} files
 * @param {Record<string, any>} v @param {Selection} selection @param {string} root
 */
function fileReports(files, v, selection, root) {
  const failing = ["error", ...(v.strict ? ["warning"] : [])];
  return files.map((f) => {
    const path = repoPath(f.path, root);
    const diagnostics = completeHints(
      f.found
        .map((x) => diagnostic({ ...x, file: x.file ?? f.path }))
        .filter((d) => kept(d.code, selection, path)),
      {
        // piped without --stdin-filename: no file of any session directory (DIR kept)
        dir:
          !(f.path === "<stdin>" && !v["stdin-filename"]) && isDirectory(dirname(f.path) || ".")
            ? dirname(f.path) || "."
            : null,
        root: v.root,
      },
    );
    return {
      path: f.path,
      valid: !diagnostics.some((d) => failing.includes(d.severity)),
      schema_version: f.version,
      workflow: f.workflow,
      diagnostics,
    };
  });
}

/** The report in the format asked, and the exit code.
 * @param {Record<string, any>} v @param {any[]} reports @param {string} root @param {string | null} docsUrl */
function validateOutput(v, reports, root, docsUrl) {
  if (v.format === "json") emit(reportJson(reports));
  else if (v.format === "sarif") process.stdout.write(renderSarif(reports, { root, docsUrl }));
  else if (v.format === "github") process.stdout.write(renderGithub(reports));
  else {
    let text = renderText(reports);
    // the findings only, no summary line (nothing when all is valid)
    if (v.quiet)
      text = text
        .split("\n")
        .slice(0, -2)
        .map((l) => `${l}\n`)
        .join("");
    process.stdout.write(useColor(v.color) ? colorize(text) : text);
  }
  if (v["exit-zero"]) return EXIT_OK;
  return reports.every((r) => r.valid) ? EXIT_OK : EXIT_INVALID;
}

/** `validate -`: one document on standard input, read up to the size limit.
 * @param {Record<string, any>} v @param {string[]} paths @param {string} root @param {number} limit
 * @param {import("./config.mjs").Config} cfg */
function validateStdin(v, paths, root, limit, cfg) {
  if (paths.length !== 1)
    throw new UsageError("`-` (standard input) cannot be combined with other paths");
  const name = v["stdin-filename"] || "<stdin>";
  const data = readStdin(limit + 1);
  if (data.length > limit) {
    const tooBig = diagnostic({
      code: "SR112",
      message: `standard input is larger than ${limit} bytes`,
      file: name,
    });
    process.stderr.write(
      renderText([
        { path: name, valid: false, schema_version: null, workflow: null, diagnostics: [tooBig] },
      ]),
    );
    return EXIT_INVALID;
  }
  const now = nowFrom(v.now);
  const docsUrl = docsUrlOf(v["docs-url"], cfg);
  const selection = selectionOf(v, cfg);
  const file = validateBytesReport(data, name, {
    workflow: v.workflow,
    defaultWorkflow: cfg.workflow,
    skew: cfg.clock_skew_seconds,
    now,
    root,
    maxSize: limit,
    strict: v.strict,
    positions: PLACED_FORMATS.includes(v.format),
  });
  return validateOutput(v, fileReports([file], v, selection, root), root, docsUrl);
}

/** At most `limit` bytes of standard input. @param {number} limit */
function readStdin(limit) {
  /** @type {Buffer[]} */
  const chunks = [];
  let total = 0;
  const buf = Buffer.alloc(65536);
  while (total < limit) {
    let n;
    try {
      n = readSync(0, buf, 0, Math.min(buf.length, limit - total), null);
    } catch (err) {
      if (/** @type {any} */ (err).code === "EAGAIN") continue;
      if (/** @type {any} */ (err).code === "EOF") break;
      throw err;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    total += n;
  }
  return Buffer.concat(chunks);
}

// --- --select and --ignore: the reference's selection (ruff's) -------------------------------

const CODE_SELECTOR = /^(?:SR[0-9]{0,3}|ALL)$/;

/** `--select`/`--ignore`: comma-separated codes or prefixes, the option repeatable.
 * @param {string[] | undefined} values @param {string} option */
function codesArg(values, option) {
  if (values === undefined) return null;
  const codes = values.flatMap((x) =>
    x
      .split(",")
      .map((c) => c.trim())
      .filter(Boolean),
  );
  const bad = codes.find((c) => !CODE_SELECTOR.test(c));
  if (bad !== undefined)
    throw new UsageError(
      `${option}: ${pyRepr(bad)} is not a code or prefix (like SR3 or SR301, or ALL)`,
    );
  return codes;
}

/** @typedef {import("./selection.mjs").Selection} Selection */

/** The reference's notice for read errors (SR1xx) named to be ignored: they are always reported.
 * @param {string[]} selectors @param {string} where */
function noteUnignorable(selectors, where) {
  const named = selectors.filter((s) => s.startsWith("SR1") || ["SR", "ALL", "S"].includes(s));
  if (named.length)
    process.stderr.write(
      `note: ${where} ${named.join(", ")}: read errors (SR1xx) cannot be ignored; they are still reported\n`,
    );
}

/** The codes this run reports: --select replaces the configured `select`, --ignore adds to its
 * `ignore` (ruff's precedence); `per-file-ignores` from the configuration.
 * @param {Record<string, any>} v @param {import("./config.mjs").Config} cfg @returns {Selection} */
function selectionOf(v, cfg) {
  const select = codesArg(v.select, "--select");
  const ignore = codesArg(v.ignore, "--ignore") ?? [];
  noteUnignorable(ignore, "--ignore");
  noteUnignorable(cfg.ignore, "ignore in the configuration");
  return {
    select: select ?? cfg.select,
    ignore: [...cfg.ignore, ...ignore],
    perFile: cfg.per_file_ignores.map(([glob, codes]) => [globRegex(glob), codes]),
  };
}

/** A string as Python's repr() writes it (the reference's messages quote values so).
 * @param {string} s */
function pyRepr(s) {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = [...s]
    .map((c) => {
      if (c === "\\") return "\\\\";
      if (c === q) return `\\${c}`;
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      if (c === "\t") return "\\t";
      const n = c.codePointAt(0) ?? 0;
      if (n < 0x20 || n === 0x7f) return `\\x${n.toString(16).padStart(2, "0")}`;
      return c;
    })
    .join("");
  return `${q}${body}${q}`;
}

// --- colour: the reference's terminal.colorize ---------------------------------------------

const [RED, YELLOW, CYAN, BOLD, RESET] = ["\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[1m", "\x1b[0m"];
const FINDING = /^(\S.*?): (SR\d{3}) (error|warning|info):/;
const SUMMARY = /^\d+ file\(s\) checked: .* - (\w+)$/;

/** Whether to colour standard output. @param {string} choice */
function useColor(choice) {
  if (choice === "always") return true;
  if (choice === "never") return false;
  if (process.env.NO_COLOR) return false;
  if (process.env.FORCE_COLOR) return true;
  return Boolean(process.stdout.isTTY) && process.env.TERM !== "dumb";
}

/** The text report's lines coloured: the code by severity, the summary's verdict. Only escapes
 * of our own are added (the text is already cleaned). @param {string} text */
function colorize(text) {
  return text
    .split("\n")
    .map((line) => {
      const m = FINDING.exec(line);
      if (m) {
        const colour = m[3] === "error" ? RED : m[3] === "warning" ? YELLOW : CYAN;
        return `${BOLD}${m[1]}${RESET}: ${colour}${m[2]} ${m[3]}${RESET}:${line.slice(m[0].length)}`;
      }
      const s = SUMMARY.exec(line);
      if (s) {
        const colour = s[1] !== "valid" ? RED : "\x1b[32m";
        return `${line.slice(0, line.length - s[1].length)}${colour}${s[1]}${RESET}`;
      }
      return line;
    })
    .join("\n");
}

// --- the commands a message names, runnable as printed (the reference's suggest.complete) --

/** What each command a message may name takes: a DIR or PATH positional, and which of the
 * options that name a session, its repository and the writer (the reference's parsers). */
const TAKES = /** @type {Record<string, {dir: boolean, options: string[]}>} */ ({
  recover: { dir: true, options: ["--project", "--root"] },
  migrate: { dir: true, options: ["--project", "--root"] },
  validate: { dir: true, options: ["--project", "--root"] },
  report: { dir: true, options: ["--project", "--root", "--session"] },
  resume: { dir: true, options: ["--project", "--root", "--session"] },
  "render handoff": { dir: true, options: ["--project", "--root"] },
  "session start": { dir: false, options: ["--project", "--session-dir", "--root", "--session"] },
  "session end": { dir: false, options: ["--project", "--session-dir", "--root", "--session"] },
  init: { dir: false, options: ["--session-dir", "--root", "--session"] },
  mcp: { dir: false, options: ["--root"] },
  ...Object.fromEntries(
    [
      "start",
      "checkpoint",
      "complete",
      "skip",
      "decide",
      "transition",
      "approve",
      "finding add",
      "finding resolve",
      "review-audit",
    ].map((c) => [
      c,
      { dir: false, options: ["--project", "--session-dir", "--root", "--session"] },
    ]),
  ),
});
const PLACEHOLDER_WORD = /(?<=\s)(?:PATH\|DIR|SESSION_DIR|DIR|PATH)(?=\s|$)/g;
const VALUED = new Set([
  "--project",
  "--session-dir",
  "--root",
  "--session",
  "--workflow",
  "--now",
  "--format",
  "--reason",
  "--step",
  "--name",
]);

/**
 * @typedef {{dir?: string | null, project?: string | null, root?: string | null,
 *   session?: string | null}} Naming how the call named the session (the reference's Naming)
 */

/** A suggested command with what made the user's own call work: the session (`naming.dir`
 * for a placeholder or appended, or `--project`), `--root` and `--session`, where the command
 * takes them and names none (the reference's suggest.complete).
 * @param {string} command @param {Naming} naming */
function complete(command, naming) {
  const words = command.split(/\s+/);
  const head = TAKES[`${words[1]} ${words[2]}`] ? 3 : 2;
  const takes = TAKES[words.slice(1, head).join(" ")];
  if (!takes) return command;
  let text = command;
  /** @type {string[]} */
  const extra = [];
  let rest = words.slice(head);
  const placeholder = (/** @type {string} */ w) =>
    ["DIR", "PATH", "PATH|DIR", "SESSION_DIR"].includes(w);
  if (words[1] === "init" && naming.project) {
    const project = naming.project;
    rest = rest.map((w) => (w === "PROJECT" ? project : w));
    text = text.replace(/(?<=\s)PROJECT(?=\s|$)/g, () => quote(project));
  }
  if (naming.dir) {
    const dir = naming.dir;
    const absolute = resolve(dir);
    if (absolute !== dir) {
      // the service names the directory absolute: printed as the user typed it
      rest = rest.map((w) => (w === absolute ? dir : w));
      const word = new RegExp(`(?<=\\s)${reEscape(quote(absolute))}(?=\\s|$)`, "g");
      text = text.replace(word, () => quote(dir));
    }
    text = text.replace(PLACEHOLDER_WORD, () => quote(dir));
    rest = rest.map((w) => (placeholder(w) ? dir : w));
  } else if (naming.project && takes.options.includes("--project") && rest.some(placeholder)) {
    rest = rest.filter((w) => !placeholder(w));
    text = text.replace(PLACEHOLDER_WORD, "").replace("  ", " ").trimEnd();
    extra.push("--project", naming.project);
  }
  const positional = rest.filter((w, i) => !w.startsWith("-") && !VALUED.has(rest[i - 1]));
  const named =
    extra.includes("--project") ||
    rest.includes("--project") ||
    rest.includes("--session-dir") ||
    (takes.dir && positional.length > 0);
  if (!named && words[1] !== "init") {
    if (naming.project && takes.options.includes("--project"))
      extra.push("--project", naming.project);
    else if (naming.dir && takes.dir) extra.push(naming.dir);
    else if (naming.dir && takes.options.includes("--session-dir"))
      extra.push("--session-dir", naming.dir);
  }
  if (naming.root && takes.options.includes("--root") && !rest.includes("--root"))
    extra.push("--root", naming.root);
  if (naming.session && takes.options.includes("--session") && !rest.includes("--session"))
    extra.push("--session", naming.session);
  return extra.length ? `${text} ${extra.map(quote).join(" ")}` : text;
}

/** Every command a text names in backquotes, completed. @param {string} text @param {Naming} naming */
function completeText(text, naming) {
  return text.includes("session-resume ")
    ? text.replace(/`(session-resume [^`\n]+)`/g, (_m, c) => `\`${complete(c, naming)}\``)
    : text;
}

/** Every command named in backquotes in a diagnostic's message and hint, completed.
 * @param {ReturnType<typeof diagnostic>[]} diags @param {Naming} naming */
function completeHints(diags, naming) {
  return diags.map((d) => ({
    ...d,
    message: completeText(d.message, naming),
    hint: completeText(d.hint, naming),
  }));
}

/** A PATH that does not exist, in the reference's words. @param {string} file */
const noSuchPath = (file) =>
  diagnostic({ code: "SR100", message: "no such file or directory", file });

/** A refusal as the reference's main() reports a missing path (exit 2): its JSON document on
 * standard output when JSON was asked for, the text on standard error either way.
 * @param {ReturnType<typeof diagnostic>[]} diags @param {string} format */
function refusedMissing(diags, format) {
  if (format === "json") emit({ ok: false, diagnostics: diags });
  printDiagnostics(diags);
  return EXIT_USAGE;
}

/** @param {string[]} argv */
function cmdResume(argv) {
  const { values: v, positionals } = parse(argv, {
    step: { type: "string" },
    workflow: { type: "string" },
    session: { type: "string" },
    project: { type: "string" },
    "stale-after": { type: "string" },
  });
  if (positionals.length > 1) throw new UsageError("resume takes one DIR");
  const { cfg, root, dir } = sessionOf(positionals[0], v);
  // a session directory still to create inside the repository the user stands in: the
  // answer is the fresh start (spec §10.2)
  const fresh = !lexists(dir) && creatable(dir, cwdRoot(v));
  if (!fresh && (!existsSync(dir) || !statSync(dir).isDirectory())) {
    // a DIR typed that does not exist: the reference's words, the path as typed
    return refusedMissing(
      existsSync(dir)
        ? [diagnostic({ code: "SR100", message: "no such session directory", file: dir })]
        : [noSuchPath(positionals[0] ?? dir)],
      v.format,
    );
  }
  // --stale-after, else the configured stale_after_seconds (0 too: the reference's `or`)
  const given = v["stale-after"] === undefined ? 0 : Number(v["stale-after"]);
  if (!Number.isInteger(given) || given < 0)
    throw new UsageError("--stale-after: a whole number of seconds");
  const stale = given || cfg.stale_after_seconds;
  const sent = readLease(dir).lease;
  const session = v.session ?? process.env.SESSION_RESUME_SESSION ?? null;
  /** @type {Record<string, any>} */
  let decision;
  try {
    decision = resumeDir(dir, {
      now: nowFrom(v.now),
      root,
      step: v.step ?? null,
      workflow: v.workflow ?? null,
      defaultWorkflow: cfg.workflow,
      session,
      staleSeconds: stale,
      ownerAlive: ownerAlive(sent),
    });
  } catch (err) {
    if (err instanceof WorkflowError) return workflowRefused(err, v.format);
    throw err;
  }
  decision.session_dir = dir;
  // No session named and the commands write: this answer chooses one (docs/spec.md §10.3),
  // and every writer it prints names it, as the reference's.
  const sid = session ?? (decision.session?.new ? randomBytes(8).toString("hex") : null);
  if (decision.session) decision.session.id = sid;
  const fill = {
    root: v.root,
    project:
      decision.action === "fresh_start"
        ? freshProject(dir, root, cfg.workflow)
        : projectOf(dir, root, cfg.workflow),
    session: sid,
  };
  if (decision.action === "fresh_start")
    for (const c of decision.commands ?? [])
      if (c.run === INIT)
        c.run = initCommand(
          dir,
          fill.project,
          v.workflow || stateWorkflowSpec(null, cfg.workflow),
          sid,
        );
  // decision version 2: commands (and alternatives) are {run, when} objects
  for (const key of ["commands", "alternatives"]) {
    if (!Array.isArray(decision[key])) continue;
    // the --root of this call goes into every command, as the reference's
    decision[key] = decision[key].map((/** @type {any} */ c) =>
      typeof c === "string" ? runnable(c, dir, fill) : { ...c, run: runnable(c.run, dir, fill) },
    );
  }
  fillPlan(decision.plan, dir, fill);
  // every command the answer prints, the ones the codes' words name included, completed with
  // what named this call's session (the reference's complete_answer)
  /** @type {Naming} */
  const naming = {
    dir: positionals[0] ?? null,
    project: v.project ?? null,
    root: v.root,
    session: sid,
  };
  for (const key of ["commands", "alternatives"]) {
    if (!Array.isArray(decision[key])) continue;
    decision[key] = decision[key].map((/** @type {any} */ c) =>
      typeof c === "string" ? complete(c, naming) : { ...c, run: complete(c.run, naming) },
    );
  }
  completePlan(decision.plan, naming);
  for (const key of ["reasons", "warnings"]) {
    if (!Array.isArray(decision[key])) continue;
    decision[key] = decision[key].map((/** @type {any} */ r) =>
      typeof r === "object" && r !== null
        ? { ...r, message: completeText(r.message, naming), hint: completeText(r.hint, naming) }
        : r,
    );
  }
  if (v.format === "json") {
    for (const c of [...(decision.commands ?? []), ...(decision.alternatives ?? [])]) {
      // asked in JSON, asked again in JSON: the command repeats the form this answer had
      if (typeof c === "object" && c.run.startsWith("session-resume resume "))
        c.run += " --format json";
    }
    emit(decision);
  }
  // the answer as text: the reference's plan_text, ported one to one (plantext.mjs)
  else process.stdout.write(cleanLines(completeText(planText(cleanTree(decision)), naming)));
  return EXIT_OK;
}

// Python's shlex.quote: the commands read the same in both implementations
const quote = shellQuote;

/**
 * @typedef {{root?: string, project?: string | null, session?: string | null}} Fill
 */

/** The repository root of the place the user stands (or --root): never one found from a path.
 * @param {any} v @returns {string | null} */
function cwdRoot(v) {
  try {
    return v.root ? realOrAbsolute(v.root) : loadConfig(process.cwd()).root;
  } catch {
    return null;
  }
}

/** Whether `dir`, absent, is a directory `init` may create: nothing by its name, and its
 * nearest existing ancestor a directory inside `root` (the reference's `creatable`).
 * @param {string} dir @param {string | null} root */
function creatable(dir, root) {
  if (root === null || lexists(dir)) return false;
  // no repository here (the reference's REPOSITORY_MARKS): nothing to start a session in
  if (![".git", ".session-resume.yaml", "pyproject.toml"].some((m) => lexists(join(root, m))))
    return false;
  const top = realOrAbsolute(root);
  let at = resolve(dir);
  while (!lexists(at)) {
    const parent = dirname(at);
    if (parent === at) return false;
    at = parent;
  }
  const r = realOrAbsolute(at);
  try {
    if (!statSync(r).isDirectory()) return false;
  } catch {
    return false;
  }
  return r === top || r.startsWith(top.endsWith("/") ? top : `${top}/`);
}

/** A fresh start's project: the directory's name when `--project` names the directory.
 * @param {string} dir @param {string} root @param {string | null} configured */
function freshProject(dir, root, configured) {
  const project = basename(dir);
  if (!PROJECT.test(project)) return null;
  try {
    return resolve(projectDir(project, root, configured)) === resolve(dir) ? project : null;
  } catch {
    return null;
  }
}

/** A fresh start's first command (the reference's `_init_command`).
 * @param {string} dir @param {string | null} project @param {string} spec @param {string | null} sid */
function initCommand(dir, project, spec, sid) {
  const name = project ?? basename(dir);
  const typed =
    !spec.includes("/") && !spec.endsWith(".yaml") && !spec.endsWith(".yml")
      ? spec
      : isAbsolute(spec)
        ? relative(process.cwd(), spec)
        : spec;
  let run = `session-resume init ${quote(name)} --workflow ${quote(typed)}`;
  if (project === null) run += ` --session-dir ${quote(dir)}`;
  return run + (sid !== null ? ` --session ${quote(sid)}` : "");
}

/** The state's project when `--project` names `dir` as a printed writer resolves it (no
 * --workflow: the configured workflow's session_dir, else the built-in workflow's directory
 * that holds the session), else null (the reference's `_project_of`).
 * @param {string} dir @param {string} root @param {string | null} configured */
function projectOf(dir, root, configured) {
  let project = null;
  // read as every state is read: never a FIFO (an open of one blocks), never past the limit
  const read = readLimited(join(dir, STATE), { root });
  if (read.data === undefined) return null;
  try {
    const doc = JSON.parse(read.data.toString("utf8"));
    project = doc && typeof doc.project === "string" ? doc.project : null;
  } catch {
    return null;
  }
  if (project === null || !PROJECT.test(project)) return null;
  try {
    return resolve(projectDir(project, root, configured)) === resolve(dir) ? project : null;
  } catch {
    return null; // SR185: two sessions of that name, --project would name neither
  }
}

/** A decision's command template made runnable for `dir`, as the reference does: DIR and
 * PROJECT filled, a writer named by `--project` (the project's own directory) or
 * `--session-dir`, then `--session ID`, and the `--root` the call was given.
 * @param {string} command @param {string} dir @param {Fill} fill */
function runnable(command, dir, fill) {
  let out = command.replaceAll(" DIR", ` ${quote(dir)}`);
  if (fill.project) out = out.replaceAll(" PROJECT", ` ${quote(fill.project)}`);
  const parts = out.split(/\s+/);
  if (isWriter(out)) {
    out += fill.project ? ` --project ${quote(fill.project)}` : ` --session-dir ${quote(dir)}`;
    if (fill.session) out += ` --session ${quote(fill.session)}`;
  }
  // the --root the call was given: the command runs as printed from where the user stands
  if (fill.root !== undefined && !parts.includes("--root")) out += ` --root ${quote(fill.root)}`;
  return out;
}

/** The plan's writes, runnable as printed (the same filling as the commands).
 * @param {any} plan @param {string} dir @param {Fill} fill */
function fillPlan(plan, dir, fill) {
  if (!plan) return;
  for (const c of plan.checkpoints ?? []) c.write = runnable(c.write, dir, fill);
  if (typeof plan.complete === "string") plan.complete = runnable(plan.complete, dir, fill);
  if (plan.review_audit) plan.review_audit.write = runnable(plan.review_audit.write, dir, fill);
  const next = plan.next_step;
  if (next)
    for (const k of ["start", "skip", "transition"])
      if (typeof next[k] === "string")
        // after a session break the next chat starts it under its own session (spec §10.2)
        next[k] = runnable(
          next[k],
          dir,
          next.by === "next_chat" && k !== "skip" ? { ...fill, session: null } : fill,
        );
  for (const g of [plan.gate, plan.open_gate])
    if (g && typeof g.approve === "string") g.approve = runnable(g.approve, dir, fill);
}

/** The plan's writes completed for the call (as `fillPlan` fills them).
 * @param {any} plan @param {Naming} naming */
function completePlan(plan, naming) {
  if (!plan) return;
  for (const c of plan.checkpoints ?? []) c.write = complete(c.write, naming);
  if (typeof plan.complete === "string") plan.complete = complete(plan.complete, naming);
  if (plan.review_audit) plan.review_audit.write = complete(plan.review_audit.write, naming);
  const next = plan.next_step;
  // after a session break the next chat starts it under its own session (spec §10.2)
  const later = next?.by === "next_chat" ? { ...naming, session: null } : naming;
  if (next)
    for (const k of ["start", "skip", "transition"])
      if (typeof next[k] === "string") next[k] = complete(next[k], k === "skip" ? naming : later);
  for (const g of [plan.gate, plan.open_gate])
    if (g && typeof g.approve === "string") g.approve = complete(g.approve, naming);
}

/** @param {string[]} argv */
function cmdMigrate(argv) {
  const { values: v, positionals } = parse(argv, {
    "dry-run": { type: "boolean", default: false },
    check: { type: "boolean", default: false },
    salvage: { type: "boolean", default: false },
    workflow: { type: "string" },
    project: { type: "string" },
  });
  if (!positionals.length && !v.project)
    throw new UsageError("give the state files or session directories (PATH|DIR), or --project");
  if (v["dry-run"] && v.check) throw new UsageError("--dry-run and --check exclude each other");
  // a PATH that does not exist: refused before anything is read, as the reference does
  const missing = positionals.filter((p) => !lexists(resolvePath(p, v.root)));
  if (missing.length) return refusedMissing(missing.map(noSuchPath), v.format);
  if (v.workflow) {
    // a broken --workflow is refused once, before any file is read (the reference's)
    try {
      loadWorkflow(v.workflow);
    } catch (err) {
      if (err instanceof WorkflowError) return workflowRefused(err, v.format);
      throw err;
    }
  }
  let paths;
  let cfg;
  let root;
  if (v.project) {
    // the session --project names (docs/config.md), as the reference's `session_of_project`
    const named = sessionOf(undefined, v);
    ({ cfg, root } = named);
    paths = [named.dir];
  } else {
    paths = positionals.map((p) => resolvePath(p, v.root));
    // the repository and configuration of the first path (docs/config.md)
    cfg = configNear(paths[0], v.root);
    root = v.root ? realOrAbsolute(v.root) : cfg.root;
  }
  const now = nowFrom(v.now);
  const write = !(v["dry-run"] || v.check);
  /** @type {ReturnType<typeof diagnostic>[]} */
  const problems = [];
  const outcomes = [];
  for (const p of paths) {
    const found = validateReport.discover(p);
    if (!found.files.length) {
      const code = found.codes[0] ?? "SR100";
      problems.push(
        diagnostic({ code, file: p, message: code === "SR101" ? NO_STATE_UNDER : undefined }),
      );
    }
    for (const f of found.files) {
      const dir = sessionDirOf(f);
      const res = migrateDir(dir, {
        now,
        root,
        workflow: v.workflow || cfg.workflow,
        dryRun: !write,
        salvage: v.salvage,
      });
      const status = res.status === "migrated" && !write ? "would_migrate" : res.status;
      // --project: the session directory as the reference names it (absolute)
      const file = v.project ? join(dir, STATE) : rel(join(dir, STATE));
      if (res.original && res.document)
        orderLike(res.original, res.document, usedWorkflow(res.document, v.workflow));
      // the migration's own notes carry messages (SR152 names --salvage); a store refusal only codes
      const noted = new Set((res.notes ?? []).map((n) => n.code));
      outcomes.push({
        path: file,
        status,
        from_version: res.from ?? null,
        kept_as: res.keptAs ?? null,
        patch: res.original && res.document ? jsonPatch(res.original, res.document) : [],
        before: res.original,
        after: res.document,
        // the commands the notes name, runnable as printed from here (the reference's _complete)
        notes: completeHints(
          [
            ...(res.notes ?? []).map((/** @type {any} */ n) =>
              diagnostic({
                code: n.code,
                message: n.message,
                pointer: n.pointer,
                line: n.line,
                column: n.column,
                file,
              }),
            ),
            ...res.codes
              .filter((code) => !noted.has(code))
              .map((code) => diagnostic({ code, file })),
          ],
          { dir: dirname(file) || ".", root: v.root ?? null },
        ),
      });
    }
  }
  if (v.format === "json")
    // the reference's json.dumps: the patch's values keep their keys' order as read
    process.stdout.write(
      `${pyDumps({ files: outcomes.map(({ before, after, kept_as, ...o }) => o), problems })}\n`,
    );
  else {
    printDiagnostics(problems, process.stdout); // the reference prints them with the outcomes
    for (const o of outcomes) {
      const label = /** @type {Record<string, string>} */ ({
        current: `already current (${CURRENT}), nothing to do`,
        migrated: `migrated ${o.from_version} -> ${CURRENT} (${o.patch.length} change(s)); the original is kept for good as ${o.kept_as} (and as .bak until a later write)`,
        would_migrate: `would migrate ${o.from_version} -> ${CURRENT} (${o.patch.length} change(s))`,
        refused: "not migrated",
      })[o.status];
      process.stdout.write(cleanLines(`${o.path}: ${label}\n`));
      printDiagnostics(
        o.notes.map((d) => ({ ...d, hint: "" })),
        process.stdout,
      );
      if (v["dry-run"] && o.status === "would_migrate" && o.before && o.after) {
        // the patch and a readable diff of the two files, as the reference prints them
        process.stdout.write(`JSON Patch (RFC 6902):\n${pyDumps(o.patch)}\n`);
        const lines = (/** @type {unknown} */ doc) => splitLines(`${pyDumps(doc)}\n`);
        const diff = unifiedDiff(
          lines(o.before),
          lines(o.after),
          `${o.path} (now)`,
          `${o.path} (migrated)`,
        );
        process.stdout.write(diff.join(""));
      }
    }
  }
  const refused =
    problems.length > 0 ||
    outcomes.some((o) => o.status === "refused" || o.notes.some((d) => d.severity === "error"));
  const code =
    refused || (v.check && outcomes.some((o) => o.status === "would_migrate"))
      ? EXIT_INVALID
      : EXIT_OK;
  if (v.format !== "json") migrateSummary(outcomes, problems, v, code !== EXIT_OK);
  return code;
}

/** The workflow a migration ran under: the one given, else the migrated state's own built-in.
 * @param {Record<string, unknown>} doc @param {string | undefined} given */
function usedWorkflow(doc, given) {
  const name = given ?? (typeof doc.workflow === "string" ? doc.workflow : null);
  try {
    return name !== null && (given || builtins().includes(name)) ? loadWorkflow(name) : null;
  } catch (err) {
    if (err instanceof WorkflowError) return null;
    throw err;
  }
}

/** The last line(s) of `migrate` text: the counts, then the command that does what is left,
 * as the reference prints them. @param {{path: string, status: string}[]} outcomes
 * @param {unknown[]} problems @param {Record<string, any>} v @param {boolean} failed */
function migrateSummary(outcomes, problems, v, failed) {
  const count = (/** @type {string} */ s) => outcomes.filter((o) => o.status === s).length;
  const planning = v.check || v["dry-run"];
  const parts = [
    planning ? `${count("would_migrate")} to migrate` : "",
    planning ? "" : `${count("migrated")} migrated`,
    `${count("current")} current`,
    count("refused") ? `${count("refused")} refused` : "",
    problems.length ? `${problems.length} problem(s)` : "",
  ];
  process.stdout.write(
    `${outcomes.length} file(s) checked: ${parts.filter(Boolean).join(", ")} - ${failed ? "failed" : "ok"}\n`,
  );
  const pending = outcomes.filter((o) => o.status === "would_migrate").map((o) => o.path);
  if (!pending.length) return;
  const cmd = ["session-resume", "migrate"];
  if (v.workflow) cmd.push("--workflow", v.workflow);
  if (v.salvage) cmd.push("--salvage");
  if (v.root) cmd.push("--root", v.root);
  const fix = clean(
    [...cmd, ...(v.project ? ["--project", v.project] : pending)].map(quote).join(" "),
  );
  process.stdout.write(
    cleanLines(
      `${v.check ? "fix" : "to write it"}: run \`${fix}\` (each original is kept beside its state)\n`,
    ),
  );
}

/** @param {string[]} argv */
function cmdRecover(argv) {
  const { values: v, positionals } = parse(argv, {
    workflow: { type: "string" },
    project: { type: "string" },
  });
  if (positionals.length > 1 || (!positionals.length && !v.project))
    throw new UsageError("recover takes one DIR (or --project NAME)");
  // DIR and --project may both be given: then --project names the project, not the directory
  const { cfg, root, dir } = sessionOf(
    positionals[0],
    positionals.length ? { ...v, project: undefined } : v,
  );
  // nothing is created for a session that does not exist: refused as the reference refuses
  // it (a DIR that names nothing, a --project whose directory is missing: exit 2)
  const missing = positionals.length
    ? lexists(resolvePath(positionals[0], v.root))
      ? null
      : noSuchPath(positionals[0])
    : isDirectory(dir)
      ? null
      : diagnostic({ code: "SR100", message: "the session directory does not exist", file: dir });
  if (missing !== null) return refusedMissing([missing], v.format);
  // the workflow of a fresh state, refused when broken before anything is read or written
  // (exit 2, as every command refuses a broken workflow)
  try {
    loadWorkflow(v.workflow || cfg.workflow || "apex");
  } catch (err) {
    if (err instanceof WorkflowError) return workflowRefused(err, v.format);
    throw err;
  }
  const res = recoverDir(dir, {
    now: nowFrom(v.now),
    root,
    workflow: v.workflow || cfg.workflow,
    project: v.project ?? null,
  });
  const file = join(dir, STATE);
  if (res.status === "refused") {
    // in the reference's words where they are known, else the codes' summaries; as the
    // reference refuses: a JSON document on standard output (--format json), the text on
    // standard error
    const worded = new Set((res.found ?? []).map((f) => f.code));
    const diags = [
      ...(res.found ?? []).map((f) => diagnostic({ file, ...f })),
      ...res.codes.filter((c) => !worded.has(c)).map((code) => diagnostic({ code, file })),
    ];
    if (v.format === "json") emit({ ok: false, diagnostics: diags });
    printDiagnostics(diags);
    return EXIT_INVALID;
  }
  // what was found and why the .bak was not usable (docs/spec.md §5), in the reference's
  // words and places, the commands they name completed as this call named the session
  /** @type {Naming} */
  const naming = { dir: positionals[0] ?? rel(dir), project: v.project ?? null, root: v.root };
  const found = completeHints(
    (res.found ?? []).map((f) => diagnostic({ ...f, file })),
    naming,
  );
  const problems = completeHints(
    res.codes
      .filter((c) => c === "SR505")
      .map((code) => diagnostic({ code, file: join(dir, WORKLOG) })),
    naming,
  );
  const action = res.status === "none" ? "none" : res.status;
  const backupProblems = completeHints(
    (res.backupFound ?? []).map((f) => diagnostic({ ...f, file: `${file}.bak` })),
    naming,
  );
  if (v.format === "json") {
    emit({
      action,
      corrupt_kept_as: res.keptAs ?? null,
      migrated_from: res.migratedFrom ?? null,
      pre_migration_kept_as: res.preMigrationKeptAs ?? null,
      found,
      backup_problems: backupProblems,
      problems,
    });
  } else {
    // one line says what was done, as the reference's; the codes found are its reason
    const why =
      found.length && action !== "none"
        ? ` (the state file: ${found.map((d) => `${d.code} ${d.message}`).join("; ")})`
        : "";
    const preKept = res.preMigrationKeptAs
      ? `; the ${res.migratedFrom} file is kept as ${res.preMigrationKeptAs}`
      : "";
    const migrated = res.migratedFrom
      ? ` (a ${res.migratedFrom} state, migrated to ${CURRENT}${preKept})`
      : "";
    const unusable = backupProblems.map((d) => `${d.code} ${d.message}`).join("; ");
    const msg = /** @type {Record<string, string>} */ ({
      none: "the state file is readable; nothing to recover",
      restored_backup: `restored 00-session-state.json from .bak${migrated}${why}`,
      recreated: `no usable .bak: created a fresh state, every step pending${unusable ? ` (the .bak is not usable: ${unusable})` : ""}${why}`,
    })[action];
    const kept = res.keptAs ? `; the corrupt file is kept as ${res.keptAs}` : "";
    const failed = problems.length ? " — FAILED, see the errors below" : "";
    process.stdout.write(
      cleanLines(`${clean(positionals[0] ?? rel(dir))}: ${msg}${kept}${failed}\n`),
    );
    printDiagnostics(problems);
  }
  return problems.length ? EXIT_INVALID : EXIT_OK;
}

// --- the write moments -------------------------------------------------------------------

/** @type {ArgOptions} */
const SESSION_OPTIONS = {
  "session-dir": { type: "string" },
  project: { type: "string" },
  session: { type: "string" },
};

/** @param {Record<string, any>} v @param {string|null} [project] */
function context(v, project = null) {
  const session = v.session ?? process.env.SESSION_RESUME_SESSION ?? null;
  if (session !== null && !SESSION_ID.test(session)) {
    throw new UsageError(
      `--session: ${JSON.stringify(session)} is not a session id (letters, digits and . _ : @ -, at most 128 characters)`,
    );
  }
  if (v["session-dir"] && v.project && project === null)
    throw new UsageError("--session-dir and --project exclude each other");
  const name = project ?? v.project ?? null;
  if (!v["session-dir"] && !name)
    throw new UsageError("give the session with --session-dir DIR or --project NAME");
  // the reference's one rule: DIR under the root first, then the current directory; the root
  // found from the session directory upwards (--project: from the current directory)
  const { cfg, root, dir } = sessionOf(
    v["session-dir"],
    { ...v, project: v["session-dir"] ? undefined : name },
    "--session-dir",
  );
  // how this call named its session: the commands a refusal prints are completed with it
  CALL.naming = { dir: v["session-dir"] ?? null, project: name, root: v.root ?? null, session };
  return {
    dir,
    now: nowFrom(v.now),
    root,
    session,
    // the configured lease threshold and workflow (docs/config.md)
    staleSeconds: cfg.stale_after_seconds,
    defaultWorkflow: cfg.workflow ?? "apex",
    initWorkflow: asTyped(cfg.workflow),
    archiveKeep: cfg.archive_keep,
  };
}

/** The configured workflow as a command run from here names it: a built-in by its name, a
 * file by its path from the current directory (the reference's `_as_typed`).
 * @param {string | null} workflow */
function asTyped(workflow) {
  if (workflow === null || builtins().includes(workflow)) return workflow;
  return rel(workflow);
}

/** The command line of this run, its options once read, and how it named its session (the
 * reference's Naming). @type {{argv: string[], values: Record<string, any>, naming: Naming}} */
const CALL = { argv: [], values: {}, naming: {} };

/** A refusal's words with the commands they name runnable as printed: "the same command with
 * `--session ID`" becomes this call's own command line with it (the reference's
 * `_same_command`), every other command completed. @param {string} text */
function refusalText(text) {
  const same = text.replace(
    /the same command with `--session ([^`\s]+)`/g,
    (_m, id) => `\`${["session-resume", ...CALL.argv, "--session", id].map(quote).join(" ")}\``,
  );
  return completeText(same, CALL.naming);
}

/** @param {W.WriteResult} res @param {string} format @param {string} text */
function emitWrite(res, format, text) {
  if (format === "json") {
    const step =
      res.step !== null && res.document.steps && typeof res.document.steps[res.step] === "object"
        ? { key: res.step, ...res.document.steps[res.step] }
        : null;
    /** @type {Record<string, unknown>} */
    const out = {
      ok: true,
      revision: res.revision,
      step,
      event: res.event,
      events: res.events,
      session: res.session,
      lease: res.lease,
    };
    if (res.previousSession !== null) out.previous_session = res.previousSession;
    if (res.archivedTo) out.archived_to = res.archivedTo;
    if (res.warnings?.length) out.warnings = warningsOf(res);
    emit(out);
    return EXIT_OK;
  }
  // the reference's `_emit`, line for line
  if (res.lease === "takeover")
    process.stdout.write(
      `took over the lease of session ${res.previousSession} (logged); this is session ${res.session}\n`,
    );
  else if (res.lease === "create")
    process.stdout.write(`started session ${res.session} (lease 00-session.active)\n`);
  else if (res.lease === "adopt")
    process.stdout.write(
      `adopted the implicit lease of session ${res.previousSession} (logged); this is session ${res.session}\n`,
    );
  process.stdout.write(cleanLines(`${text} (revision ${res.revision}, session ${res.session})\n`));
  // written anyway: what the write left unrecorded (SR716, SR717)
  if (res.warnings?.length) printDiagnostics(warningsOf(res));
  return EXIT_OK;
}

/** A write's warnings as diagnostics, the commands they name runnable from where the user
 * stands (the reference's `_suggested`). @param {W.WriteResult} res */
function warningsOf(res) {
  return completeHints(
    res.warnings.map((w) => diagnostic(w)),
    CALL.naming,
  );
}

/** "step KEY (NAME)" as the state names it after the write (the reference's `_step_label`).
 * @param {W.WriteResult} res @param {string} key */
function stepLabel(res, key) {
  const step = res.document?.steps?.[key];
  const name = step && typeof step === "object" ? step.name : null;
  return name ? `step ${key} (${name})` : `step ${key}`;
}

/** Refusals: coded diagnostics on stderr (text) or {"ok": false, ...} on stdout (json). @param {string} format @param {() => number} fn */
function guarded(format, fn) {
  try {
    return fn();
  } catch (err) {
    // a bad configuration: refused as the reference's writers refuse (exit 2)
    if (err instanceof ConfigError || err instanceof Refusal)
      return fail(refusalDiags(err), EXIT_USAGE, format, true);
    if (err instanceof W.WriteError || err instanceof WorkflowError || err instanceof LockError) {
      const problems =
        err instanceof W.WriteError
          ? err.problems
          : err instanceof WorkflowError
            ? err.diagnostics
            : err.codes.map((code) => ({ code, message: err.message }));
      return fail(
        problems
          .map((p) => diagnostic(p))
          .map((d) => ({ ...d, message: refusalText(d.message), hint: refusalText(d.hint) })),
        err instanceof WorkflowError
          ? EXIT_USAGE // a broken workflow: exit 2, in every command
          : err instanceof W.WriteError
            ? err.exitCode
            : EXIT_INVALID,
        format,
        true,
      );
    }
    throw err;
  }
}

/** A workflow that cannot be loaded (SR400-SR403), as the reference refuses it: exit 2, its
 * findings on stderr, and with --format json also {"ok": false, ...} on stdout.
 * @param {WorkflowError} err @param {string} format */
function workflowRefused(err, format) {
  const diags = err.diagnostics.map((d) => diagnostic(d));
  if (format === "json") emit({ ok: false, diagnostics: diags });
  printDiagnostics(diags);
  return EXIT_USAGE;
}

/** @param {ReturnType<typeof diagnostic>[]} diags @param {number} code @param {string} format @param {boolean} jsonOnStdout */
function fail(diags, code, format, jsonOnStdout) {
  if (format === "json" && jsonOnStdout) emit({ ok: false, diagnostics: diags });
  else printDiagnostics(diags);
  return code;
}

/** What the command modules under lib/cli/ use of this one, handed to them so that they import
 * nothing from it: parsing, naming the session, refusals and the writers' output. */
export const KIT = {
  parse,
  context,
  guarded,
  emitWrite,
  stepLabel,
  emit,
  clean: cleanLines,
  hereRelative,
  usage: (/** @type {string} */ message) => new UsageError(message),
  SESSION_OPTIONS,
  EXIT_OK,
};

const COMMANDS = {
  validate: cmdValidate,
  resume: cmdResume,
  migrate: cmdMigrate,
  recover: cmdRecover,
  ...writeCommands(KIT),
  ...reviewCommands(KIT),
  ...sessionCommands(KIT),
};

const USAGE = `usage: session-resume COMMAND [options]

The session-resume protocol in JavaScript (npm package session-resume).

commands:
  validate [PATH...]   check state files (schema, semantic and workflow rules)
  resume DIR           decide how to resume: the action, step, checkpoint, files to skip
  migrate PATH...      migrate state files to the current schema (--dry-run, --check,
                       --salvage: resolve contradictions, displaced values kept in x-legacy)
  recover DIR          restore a corrupt state from .bak, or recreate it fresh
  init PROJECT         create the session's state from the workflow template (--fresh:
                       archive an existing session first, under .archive/)
  start STEP | checkpoint STEP SUB_STEP | complete STEP | skip STEP --reason R
  decide KEY VALUE | decide --log --title T --choice C --rationale R
  finding add|resolve TITLE | transition --complete A --start B [--decision K=V]
  review-audit STEP [--complexity TIER] [--passes-planned N] [--passes-executed N]
                       [--model MODEL] [--skipped-pass N --skip-reason TEXT]
  session start [--owner NAME] [--pid PID] [--takeover] | session end
                       take or end the lease (00-session.active); start prints the id
  ping                 refresh the lease's heartbeat (writes only the lease)
  approve STEP [--decision K=V]

validate also: --format github|sarif, --select/--ignore CODES, --exit-zero, -q, --color WHEN,
--strict, PATH - (standard input) with --stdin-filename NAME.
common options: --format text|json, --now TIMESTAMP, --root DIR; writers: --session-dir DIR
or --project NAME, --session ID. Exit codes: 0 ok, 1 invalid or refused, 2 usage, 3 internal.
`;

/** @param {ConfigError | Refusal} err */
const refusalDiags = (err) =>
  err instanceof ConfigError ? [diagnostic(err.diagnostic)] : err.diags.map((d) => diagnostic(d));

/** A bad configuration or another refusal (exit 2), as the reference reports it: `validate --format json|sarif`
 * writes its refusal report, any other `--format json` an `{"ok": false}` document; the
 * diagnostic on standard error. @param {string} command @param {ConfigError | Refusal} err */
function refusedConfig(command, err) {
  const v = CALL.values;
  const diags = refusalDiags(err);
  if (command === "validate")
    return refusedValidate(v.format ?? "text", diags, v.root ? realOrAbsolute(v.root) : null);
  if (v.format === "json") emit({ ok: false, diagnostics: diags });
  printDiagnostics(diags);
  return EXIT_USAGE;
}

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
  CALL.argv = argv;
  CALL.values = {};
  if (!fn) {
    process.stderr.write(
      `session-resume: error: unknown command ${JSON.stringify(command)}\n${USAGE}`,
    );
    return EXIT_USAGE;
  }
  const options = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (options.includes("--help") || options.includes("-h")) {
    process.stdout.write(USAGE);
    return EXIT_OK;
  }
  try {
    return fn(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`session-resume: error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof ConfigError || err instanceof Refusal) return refusedConfig(command, err);
    if (err instanceof MissingPath)
      return refusedMissing([noSuchPath(err.path)], CALL.values.format ?? "text");
    // a broken workflow met while naming the session (the configured one `--project` reads):
    // exit 2, as every command refuses a broken workflow
    if (err instanceof WorkflowError) {
      const v = CALL.values;
      if (command !== "validate") return workflowRefused(err, v.format ?? "text");
      const diags = err.diagnostics.map((d) => diagnostic(d));
      return refusedValidate(v.format ?? "text", diags, v.root ? realOrAbsolute(v.root) : null);
    }
    const e = /** @type {any} */ (err);
    process.stderr.write(
      `session-resume: SR900 internal error: ${e?.name}: ${e?.message}\nThis is a bug; please report it with the command you ran.\n`,
    );
    if (process.env.SESSION_RESUME_DEBUG) process.stderr.write(`${e?.stack}\n`);
    return EXIT_INTERNAL;
  }
}
