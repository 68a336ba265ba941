// The validate operation (spec §2, §3): read safely, parse strictly, gate the version, check
// the version's own schema, then the semantic and workflow rules, then the session directory.

import { lstatSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { checkSessionHandoffFound } from "./handoff.mjs";
import { CODES } from "./codes.mjs";
import { capped, found, pointerSplit, pyRepr, shellQuote, strRepr } from "./findings.mjs";
import { isCorrupt, MAX_LOCATED, readJsonBytes } from "./jsonread.mjs";
import { lineCol, locate } from "./locate.mjs";
import { lexists, readLimited } from "./files.mjs";
import { checkStateFound } from "./rules.mjs";
import { usableBackup } from "./store.mjs";
import { CURRENT, isKnown, KNOWN, newerThanKnown, schemaOf, versionOf } from "./versions.mjs";
import { explain } from "./schema.mjs";
import { readLease, scanWorklogFound, STATE, tempFiles } from "./session.mjs";
import { loadWorkflow, WorkflowError } from "./workflow.mjs";

/**
 * validate's options: now (µs), the workflow to check against (default the state's own, else
 * apex), the clock skew allowed (s), the size limit (bytes), the repository root, whether
 * listed artifacts must exist (rules.mjs RuleOptions) and, for one document, its session
 * directory.
 * @typedef {{now: number, workflow?: string | null, skew?: number, maxSize?: number,
 *   root?: string | null, checkArtifacts?: boolean, sessionDir?: string | null}} ValidateOptions
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
  const parsed = readJsonBytes(data);
  /** @type {Found[]} */
  const out = [...parsed.found];
  const doc = parsed.value;
  if (doc === null) return out;
  const v = versionOf(doc);
  const at = "/schema_version";
  if (v.invalid) {
    const msg = `schema_version ${pyRepr(doc.schema_version)} is not a version string like ${strRepr(CURRENT)}`;
    out.push(found("SR142", msg, at));
  } else if (newerThanKnown(v.num)) {
    const msg = `schema version ${v.raw} is newer than this tool supports (${CURRENT})`;
    out.push(found("SR141", msg, at));
  } else if (!isKnown(v.raw)) {
    out.push(
      found("SR142", `schema version ${v.raw} does not exist (known: ${KNOWN.join(", ")})`, at),
    );
  } else if (v.raw !== CURRENT) {
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
    out.push(...explain(schemaOf(CURRENT), doc));
    const own = typeof doc.workflow === "string" ? doc.workflow : null;
    let wf = null;
    try {
      wf = loadWorkflow(opts.workflow ?? own ?? "apex");
    } catch (err) {
      if (!(err instanceof WorkflowError)) throw err;
      out.push(...err.codes.map((code) => found(code, err.message)));
    }
    if (wf && own && own !== wf.id) {
      const msg = `the state names workflow ${strRepr(own)} but ${strRepr(wf.id)} is selected`;
      out.push(found("SR404", msg, "/workflow"));
    }
    out.push(...checkStateFound(doc, wf, opts));
  }
  if (parsed.text !== null && (opts.positions || !ok(out, Boolean(opts.strict))))
    addPositions(out, parsed.text);
  return out;
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

/** @param {string} path @returns {{files: string[], codes: string[]}} */
function discover(path) {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return { files: [path], codes: [] };
  }
  if (!st.isDirectory()) return { files: [path], codes: [] };
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

/** The findings of one state file on disk: the document's, the backup's (SR130) and the
 * session directory's other files', at most 100 of a code (the reference's `validate_file`).
 * @param {string} name @param {ValidateOptions & {strict?: boolean, positions?: boolean}} opts
 * @returns {Found[]} */
function validateFile(name, opts) {
  const res = readLimited(name, { maxSize: opts.maxSize, root: opts.root });
  if (!res.data) return res.codes.map((code) => found(code, CODES[code]?.summary ?? ""));
  const sessionDir = dirname(name);
  const out = validateFound(res.data, { ...opts, sessionDir, file: name });
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
  return capped(out, (code) => CODES[code]?.severity ?? "error");
}

/** The version and workflow a report names for a document (null: unreadable or no version).
 * @param {Uint8Array | null | undefined} data @param {ValidateOptions} opts */
function learnt(data, opts) {
  let version = null;
  let workflow = null;
  if (data) {
    const parsed = readJsonBytes(data);
    if (parsed.value !== null && !isCorrupt(parsed.codes)) {
      const v = versionOf(parsed.value);
      version = v.invalid ? null : v.raw;
      if (version === CURRENT)
        workflow =
          typeof parsed.value.workflow === "string"
            ? parsed.value.workflow
            : (opts.workflow ?? "apex");
    }
  }
  return { version, workflow };
}

/**
 * validate, file by file: [{path, codes, found, version, workflow}] for the path (a file, or a
 * directory searched for state files; none found is one entry with SR101): `found` the
 * findings in the reference's words and order, `codes` their codes, sorted, each once.
 * @param {string} path @param {ValidateOptions & {strict?: boolean, positions?: boolean}} opts
 * @returns {FileReport[]}
 */
export function validateReport(path, opts) {
  const { files, codes } = discover(path);
  if (!files.length) {
    const none = codes.map((code) => found(code, CODES[code]?.summary ?? ""));
    return [{ path, codes, found: none, version: null, workflow: null }];
  }
  return files.map((f) => {
    const list = validateFile(f, opts);
    const res = readLimited(f, { maxSize: opts.maxSize, root: opts.root });
    const codes = [...new Set(list.map((x) => x.code))].sort();
    return { path: f, codes, found: list, ...learnt(res.data, opts) };
  });
}
validateReport.discover = discover;

/** validate: every code found for the path (a file, or a directory searched for state files).
 * @param {string} path @param {ValidateOptions} opts @returns {string[]}
 */
export function validate(path, opts) {
  const { files, codes } = discover(path);
  for (const f of files) codes.push(...validateFile(f, opts).map((x) => x.code));
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
  const list = capped(
    validateFound(data, { ...opts, checkArtifacts: false, file: name }),
    (code) => CODES[code]?.severity ?? "error",
  );
  const codes = [...new Set(list.map((x) => x.code))].sort();
  return { path: name, codes, found: list, ...learnt(data, opts) };
}
