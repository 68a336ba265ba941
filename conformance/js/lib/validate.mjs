// The validate operation (spec §2, §3): read safely, parse strictly, gate the version, check
// the version's own schema, then the semantic and workflow rules, then the session directory.

import { lstatSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { checkSessionHandoff } from "./handoff.mjs";
import { isCorrupt, readJsonBytes } from "./jsonread.mjs";
import { lexists, readLimited } from "./files.mjs";
import { checkState } from "./rules.mjs";
import { usableBackup } from "./store.mjs";
import { CURRENT, isKnown, newerThanKnown, schemaOf, versionOf } from "./versions.mjs";
import { check } from "./schema.mjs";
import { readLease, scanWorklog, STATE, tempFiles } from "./session.mjs";
import { loadWorkflow, WorkflowError } from "./workflow.mjs";

/**
 * validate's options: now (µs), the workflow to check against (default the state's own, else
 * apex), the clock skew allowed (s), the size limit (bytes), the repository root, whether
 * listed artifacts must exist (rules.mjs RuleOptions) and, for one document, its session
 * directory.
 * @typedef {{now: number, workflow?: string | null, skew?: number, maxSize?: number,
 *   root?: string | null, checkArtifacts?: boolean, sessionDir?: string | null}} ValidateOptions
 */
/** @typedef {{path: string, codes: string[], version: string | null, workflow: string | null}}
 *   FileReport */

const SKIP_DIRS = new Set([".git", ".archive", "node_modules", ".venv", "__pycache__", ".nox"]);

/** Check one state document given as bytes.
 * @param {Uint8Array} data @param {ValidateOptions} opts @returns {string[]}
 */
export function validateDocument(data, opts) {
  const parsed = readJsonBytes(data);
  const codes = [...parsed.codes];
  const doc = parsed.value;
  if (doc === null) return codes;
  const v = versionOf(doc);
  if (v.invalid) codes.push("SR142");
  else if (newerThanKnown(v.num)) codes.push("SR141");
  else if (!isKnown(v.raw)) codes.push("SR142");
  else if (v.raw !== CURRENT) {
    codes.push(...check(schemaOf(v.raw), doc), "SR140");
  } else {
    codes.push(...check(schemaOf(CURRENT), doc));
    const own = typeof doc.workflow === "string" ? doc.workflow : null;
    let wf = null;
    try {
      wf = loadWorkflow(opts.workflow ?? own ?? "apex");
    } catch (err) {
      if (!(err instanceof WorkflowError)) throw err;
      codes.push(...err.codes);
    }
    if (wf && own && own !== wf.id) codes.push("SR404");
    codes.push(...checkState(doc, wf, opts));
  }
  return codes;
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

/** @param {string} name @param {ValidateOptions} opts @returns {string[]} */
function validateFile(name, opts) {
  const res = readLimited(name, { maxSize: opts.maxSize, root: opts.root });
  if (!res.data) return res.codes;
  const sessionDir = dirname(name);
  const codes = validateDocument(res.data, { ...opts, sessionDir });
  if (isCorrupt(codes)) {
    const bak = `${name}.bak`;
    if (lexists(bak)) {
      const b = readLimited(bak, { maxSize: opts.maxSize, root: opts.root });
      // usable: the one definition recover and resume share (docs/spec.md §5): it passes the
      // current schema, or migrate turns it into a state that does
      const projectHint = basename(dirname(resolve(name)));
      if (b.data && usableBackup(b.data, { projectHint }).document !== null) codes.push("SR130");
    }
  }
  if (basename(name) === STATE) {
    if (tempFiles(sessionDir).length) codes.push("SR170");
    codes.push(...scanWorklog(sessionDir));
    codes.push(...readLease(sessionDir).codes);
    codes.push(...checkSessionHandoff(sessionDir));
  }
  return codes;
}

/**
 * validate, file by file: [{path, codes, version, workflow}] for the path (a file, or a
 * directory searched for state files; none found is one entry with SR101).

 * @param {string} path @param {ValidateOptions} opts @returns {FileReport[]}
 */
export function validateReport(path, opts) {
  const { files, codes } = discover(path);
  if (!files.length) return [{ path, codes, version: null, workflow: null }];
  return files.map((f) => {
    const found = [...new Set(validateFile(f, opts))].sort();
    let version = null;
    let workflow = null;
    const res = readLimited(f, { maxSize: opts.maxSize, root: opts.root });
    if (res.data) {
      const parsed = readJsonBytes(res.data);
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
    return { path: f, codes: found, version, workflow };
  });
}
validateReport.discover = discover;

/** validate: every code found for the path (a file, or a directory searched for state files).
 * @param {string} path @param {ValidateOptions} opts @returns {string[]}
 */
export function validate(path, opts) {
  const { files, codes } = discover(path);
  for (const f of files) codes.push(...validateFile(f, opts));
  return [...new Set(codes)].sort();
}

/**
 * validate `-`: one document given as bytes (standard input), named `name` in messages; no
 * session directory, so none of the session's other files is checked (the reference's
 * `validate_bytes`). The same shape as one entry of `validateReport`.
 * @param {Buffer} data @param {string} name @param {any} opts
 */
export function validateBytesReport(data, name, opts) {
  const codes = [...new Set(validateDocument(data, { ...opts, checkArtifacts: false }))].sort();
  let version = null;
  let workflow = null;
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
  return { path: name, codes, version, workflow };
}
