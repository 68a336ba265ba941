// The validate operation (spec §2, §3): read safely, parse strictly, gate the version, check
// the version's own schema, then the semantic and workflow rules, then the session directory.

import { spawnSync } from "node:child_process";
import { lstatSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { checkSessionHandoffFound } from "./handoff.mjs";
import { CODES } from "./codes.mjs";
import {
  capped,
  found,
  pointerSplit,
  pyNumberRepr,
  pyRepr,
  shellQuote,
  strRepr,
} from "./findings.mjs";
import { isCorrupt, MAX_LOCATED, readJsonBytes } from "./jsonread.mjs";
import { lineCol, locate } from "./locate.mjs";
import { DEFAULT_MAX_SIZE, lexists, readLimited } from "./files.mjs";
import { checkStateFound } from "./rules.mjs";
import { usableBackup } from "./store.mjs";
import { CURRENT, isKnown, KNOWN, newerThanKnown, schemaOf, versionOf } from "./versions.mjs";
import { explain } from "./schema.mjs";
import { readLease, scanWorklogFound, STATE, tempFiles } from "./session.mjs";
import { loadWorkflow, WorkflowError } from "./workflow.mjs";
import { stateWorkflowRefusal, stateWorkflowSpec } from "./config.mjs";

/**
 * validate's options: now (µs), the workflow to check against (default the state's own, else
 * `defaultWorkflow`, the project's configured one, else apex), the clock skew allowed (s), the size limit (bytes), the repository root, whether
 * listed artifacts must exist (rules.mjs RuleOptions) and, for one document, its session
 * directory.
 * @typedef {{now: number, workflow?: string | null, defaultWorkflow?: string | null,
 *   skew?: number, maxSize?: number, root?: string | null, checkArtifacts?: boolean,
 *   sessionDir?: string | null}} ValidateOptions
 */
/** @typedef {import("./types.js").Found} Found */
/** @typedef {{path: string, codes: string[], found: Found[], version: string | null,
 *   workflow: string | null}} FileReport */

const SKIP_DIRS = new Set([".git", ".archive", "node_modules", ".venv", "__pycache__", ".nox"]);

/** Check one state document given as bytes.
 * @param {Uint8Array} data @param {ValidateOptions} opts @returns {string[]}
 */
export function validateDocument(data, opts) {
  return validateFound(data, opts).map((f) => f.code);
}

/** Whether findings leave a file valid (errors fail it; warnings too under --strict).
 * @param {Found[]} list @param {boolean} strict */
const ok = (list, strict) =>
  !list.some((f) => {
    const sev = f.severity ?? CODES[f.code]?.severity ?? "error";
    return sev === "error" || (strict && sev === "warning");
  });

/**
 * One state document's findings in the reference's words, order and places
 * (core/validation.py `validate_parsed`): the reader's, the version's, the schema's, the
 * workflow's and the rules'. Line and column are found (core/locate.py) for a file that
 * fails, or for every finding when `positions` (a format that prints places: github, sarif).
 * `file`: the name the hints quote.
 * @param {Uint8Array} data @param {ValidateOptions & {file?: string, strict?: boolean,
 *   positions?: boolean}} opts
 * @returns {Found[]}
 */
export function validateFound(data, opts) {
  return validateParts(data, opts).found;
}

/**
 * validateFound's findings, and what the check learnt on the way: the document's version
 * (null: unreadable, not a version, or one that does not exist) and the workflow it was
 * checked against (null: none could be loaded), as the reference's FileReport names them.
 * @param {Uint8Array} data @param {ValidateOptions & {file?: string, strict?: boolean,
 *   positions?: boolean}} opts
 * @returns {{found: Found[], version: string | null, workflow: string | null}}
 */
function validateParts(data, opts) {
  const parsed = readJsonBytes(data);
  /** @type {Found[]} */
  const out = [...parsed.found];
  /** @type {string | null} */
  let version = null;
  /** @type {string | null} */
  let workflow = null;
  const doc = parsed.value;
  if (doc === null) return { found: out, version, workflow };
  const v = versionOf(doc);
  const at = "/schema_version";
  if (v.invalid) {
    const raw = doc.schema_version;
    // a number as the text writes it: 3.0 is a float to the reference, not the int 3
    const at0 =
      typeof raw === "number" && parsed.text ? locate(parsed.text, ["schema_version"]) : null;
    const token =
      at0 === null ? null : /^-?[0-9.eE+-]+/.exec(/** @type {string} */ (parsed.text).slice(at0));
    const shown = token ? pyNumberRepr(token[0]) : pyRepr(raw);
    // no value: said in words, never as Python's None
    const what = raw === null || raw === undefined ? "is not set; it must be" : `${shown} is not`;
    const msg = `schema_version ${what} a version string like ${strRepr(CURRENT)}`;
    out.push(found("SR142", msg, at));
  } else if (newerThanKnown(v.num)) {
    version = v.raw;
    const msg = `schema version ${v.raw} is newer than this tool supports (${CURRENT})`;
    out.push(found("SR141", msg, at));
  } else if (!isKnown(v.raw)) {
    out.push(
      found("SR142", `schema version ${v.raw} does not exist (known: ${KNOWN.join(", ")})`, at),
    );
  } else if (v.raw !== CURRENT) {
    version = v.raw;
    out.push(...explain(schemaOf(v.raw), doc, { prefix: `(v${v.raw} schema) ` }));
    const file = opts.file ? shellQuote(opts.file) : "PATH";
    out.push(
      found(
        "SR140",
        `schema version ${v.raw} must be migrated to ${CURRENT}`,
        "schema_version" in doc ? at : "",
        `run \`session-resume migrate ${file}\` (\`--dry-run\` shows the changes)`,
      ),
    );
  } else {
    version = v.raw;
    out.push(...explain(schemaOf(CURRENT), doc));
    const own = typeof doc.workflow === "string" ? doc.workflow : null;
    let wf = null;
    // a state naming no workflow: the project's configured one; naming the configured one's
    // id: that one (the reference's state_workflow_spec)
    const spec = opts.workflow || stateWorkflowSpec(own, opts.defaultWorkflow ?? null);
    if (spec === null) {
      // the field comes from an untrusted file: a built-in workflow, never a path (else a
      // state could make the tool read any file it names; the reference's state_workflow_spec)
      const msg = stateWorkflowRefusal(own);
      out.push(found("SR403", msg, "/workflow"));
    } else {
      try {
        wf = loadWorkflow(spec);
      } catch (err) {
        if (!(err instanceof WorkflowError)) throw err;
        out.push(...err.codes.map((code) => found(code, err.message)));
      }
    }
    workflow = wf ? wf.id : null;
    if (wf && own && own !== wf.id) {
      const msg = `the state names workflow ${strRepr(own)} but ${strRepr(wf.id)} is selected`;
      out.push(found("SR404", msg, "/workflow"));
    }
    out.push(...checkStateFound(doc, wf, opts));
  }
  if (parsed.text !== null && (opts.positions || !ok(out, Boolean(opts.strict))))
    addPositions(out, parsed.text);
  return { found: out, version, workflow };
}

/** Line and column for the first MAX_LOCATED findings with a pointer and no place yet (each
 * lookup rescans the text); the rest keep the pointer. @param {Found[]} list @param {string} text */
function addPositions(list, text) {
  let located = 0;
  for (const f of list) {
    if ((f.line === undefined || f.line === null) && f.pointer && located < MAX_LOCATED) {
      located++;
      const at = locate(text, pointerSplit(f.pointer));
      if (at !== null) [f.line, f.column] = lineCol(text, at);
    }
  }
}

/** The reference's words for a directory searched without finding a state (SR101). */
export const NO_STATE_UNDER = `no ${STATE} under this directory`;

/** The state files under `top` that git tracks or would track (`.gitignore` honoured), or
 * with `ignored` those it ignores, as the reference's `git_listed` finds them; null outside a
 * git work tree or without git.
 * @param {string} top @param {boolean} [ignored] @returns {string[] | null} */
function gitListed(top, ignored = false) {
  const proc = spawnSync(
    "git",
    // core.fsmonitor=false: never run a hook the repository's config names
    [
      "-c",
      "core.fsmonitor=false",
      "-C",
      top,
      "ls-files",
      ...(ignored ? ["--others", "--ignored"] : ["--cached", "--others"]),
      "--exclude-standard",
      "-z",
      "--",
      ignored ? `:(glob)**/${STATE}` : ".",
    ],
    { timeout: 60_000, maxBuffer: 1 << 30 },
  );
  if (proc.error || proc.status !== 0) return null;
  const out = [];
  for (const rel of proc.stdout.toString("utf8").split("\0")) {
    const parts = rel.split("/");
    if (parts.at(-1) !== STATE) continue;
    if (parts.length > 8 + 1 || parts.slice(0, -1).some((d) => SKIP_DIRS.has(d))) continue;
    const path = join(top, ...parts);
    if (lexists(path)) out.push(path); // in the index but deleted in the work tree: skipped
  }
  return out.sort();
}

/** The state files under `path` (itself when it is no directory); those the search left out
 * because git ignores them are appended to `skipped` (the reference's `_search`).
 * @param {string} path @param {string[]} [skipped] @returns {{files: string[], codes: string[]}} */
function discover(path, skipped) {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return { files: [path], codes: [] };
  }
  if (!st.isDirectory()) return { files: [path], codes: [] };
  const listed = gitListed(path);
  const own = join(path, STATE);
  // the session directory named itself: .gitignore applies to the search only
  if (listed !== null && !listed.includes(own) && lexists(own)) listed.unshift(own);
  if (listed !== null && skipped)
    skipped.push(...(gitListed(path, true) ?? []).filter((p) => !listed.includes(p)));
  if (listed !== null)
    return listed.length ? { files: listed, codes: [] } : { files: [], codes: ["SR101"] };
  /** @type {string[]} */
  const found = [];
  /** @param {string} dir @param {number} depth */
  const walk = (dir, depth) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.name === STATE && !e.isDirectory())) found.push(join(dir, STATE));
    if (depth >= 8) return;
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.isDirectory() && !SKIP_DIRS.has(e.name)) walk(join(dir, e.name), depth + 1);
    }
  };
  walk(path, 0);
  return found.length ? { files: found, codes: [] } : { files: [], codes: ["SR101"] };
}

/** The reference's held reader's words for a file it did not open (storage/held.py
 * `read_limited`), where they are not the code's summary. */
const UNREAD_WORDS = /** @type {Record<string, string>} */ ({
  SR102: "not a regular file (FIFO, socket or device)",
});

/** Why a file was not read, in the reference's words where they name the file's size (SR112,
 * the limit `max_size` sets) or its kind (SR102), else the code's summary.
 * @param {string} code @param {string} name @param {ValidateOptions} opts */
function unreadWords(code, name, opts) {
  if (UNREAD_WORDS[code]) return UNREAD_WORDS[code];
  if (code === "SR112") {
    const limit = opts.maxSize ?? DEFAULT_MAX_SIZE;
    try {
      return `the file is ${statSync(name).size} bytes; the limit is ${limit}`;
    } catch {
      return `the file is over the limit of ${limit} bytes`;
    }
  }
  return CODES[code]?.summary ?? "";
}

/** The findings of one state file on disk: the document's, the backup's (SR130) and the
 * session directory's other files', at most 100 of a code (the reference's `validate_file`).
 * @param {string} name @param {ValidateOptions & {strict?: boolean, positions?: boolean}} opts
 * @returns {{found: Found[], version: string | null, workflow: string | null}} */
function validateFile(name, opts) {
  const res = readLimited(name, { maxSize: opts.maxSize, root: opts.root });
  if (!res.data) {
    const unread = res.codes.map((code) => found(code, unreadWords(code, name, opts)));
    return { found: unread, version: null, workflow: null };
  }
  const sessionDir = dirname(name);
  const parts = validateParts(res.data, { ...opts, sessionDir, file: name });
  const out = parts.found;
  if (isCorrupt(out.map((f) => f.code))) {
    const bak = `${name}.bak`;
    if (lexists(bak)) {
      const b = readLimited(bak, { maxSize: opts.maxSize, root: opts.root });
      // usable: the one definition recover and resume share (docs/spec.md §5): it passes the
      // current schema, or migrate turns it into a state that does
      const projectHint = basename(dirname(resolve(name)));
      if (b.data && usableBackup(b.data, { projectHint }).document !== null) {
        out.push(
          found(
            "SR130",
            `the state file is corrupt, but ${basename(bak)} is a valid state`,
            "",
            `run \`session-resume recover ${shellQuote(dirname(name) || ".")}\``,
          ),
        );
      }
    }
  }
  if (basename(name) === STATE) {
    for (const t of tempFiles(sessionDir).sort())
      out.push({
        ...found("SR170", "leftover temp file of an interrupted write"),
        file: join(sessionDir, t),
      });
    out.push(...scanWorklogFound(sessionDir));
    out.push(...(readLease(sessionDir).found ?? []));
    out.push(...checkSessionHandoffFound(sessionDir));
  }
  return { ...parts, found: capped(out, (code) => CODES[code]?.severity ?? "error") };
}

/**
 * validate, file by file: [{path, codes, found, version, workflow}] for the path (a file, or a
 * directory searched for state files; none found is one entry with SR101): `found` the
 * findings in the reference's words and order, `codes` their codes, sorted, each once.
 * The state files a directory's search left out because git ignores them are appended to
 * `skipped`.
 * @param {string} path @param {ValidateOptions & {strict?: boolean, positions?: boolean}} opts
 * @param {string[]} [skipped]
 * @returns {FileReport[]}
 */
export function validateReport(path, opts, skipped) {
  const { files, codes } = discover(path, skipped);
  if (!files.length) {
    const none = codes.map((code) =>
      found(code, code === "SR101" ? NO_STATE_UNDER : (CODES[code]?.summary ?? "")),
    );
    return [{ path, codes, found: none, version: null, workflow: null }];
  }
  return files.map((f) => {
    const { found: list, version, workflow } = validateFile(f, opts);
    const codes = [...new Set(list.map((x) => x.code))].sort();
    return { path: f, codes, found: list, version, workflow };
  });
}
validateReport.discover = discover;

/** validate: every code found for the path (a file, or a directory searched for state files).
 * @param {string} path @param {ValidateOptions} opts @returns {string[]}
 */
export function validate(path, opts) {
  const { files, codes } = discover(path);
  for (const f of files) codes.push(...validateFile(f, opts).found.map((x) => x.code));
  return [...new Set(codes)].sort();
}

/**
 * validate `-`: one document given as bytes (standard input), named `name` in messages; no
 * session directory, so none of the session's other files is checked (the reference's
 * `validate_bytes`). The same shape as one entry of `validateReport`.
 * @param {Buffer} data @param {string} name @param {any} opts
 * @returns {FileReport}
 */
export function validateBytesReport(data, name, opts) {
  const parts = validateParts(data, { ...opts, checkArtifacts: false, file: name });
  const list = capped(parts.found, (code) => CODES[code]?.severity ?? "error");
  const codes = [...new Set(list.map((x) => x.code))].sort();
  return { path: name, codes, found: list, version: parts.version, workflow: parts.workflow };
}
