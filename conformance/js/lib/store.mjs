// Storage (spec §4, §5): classify the state file, write atomically with .bak rotation,
// recover a corrupt state. No advisory lock is taken (Node has no flock); see the README.

import {
  closeSync,
  constants,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { HANDOFF } from "./handoff.mjs";
import { isCorrupt, readJsonBytes } from "./jsonread.mjs";
import { withLock } from "./lock.mjs";
import { CODES } from "./codes.mjs";
import {
  checkTarget,
  DEFAULT_MAX_SIZE,
  isLink,
  isWithin,
  lexists,
  linkText,
  readLimited,
  real,
} from "./files.mjs";
import { migrate, MigrationError } from "./migrate.mjs";
import { check, explain } from "./schema.mjs";
import { found, strRepr } from "./findings.mjs";
import { appendEvent, SENTINEL, STATE, WORKLOG } from "./session.mjs";
import { formatTimestamp, stamp } from "./timeutil.mjs";
import { CURRENT, isKnown, newerThanKnown, schemaOf, versionOf } from "./versions.mjs";
import { loadWorkflow, templateState } from "./workflow.mjs";

/** @typedef {import("./types.js").StateDocument} StateDocument */

export const BAK = `${STATE}.bak`;
export const LOCK = `${STATE}.lock`;

/** An operation was refused; `codes` say why (nothing was written). */
export class Refused extends Error {
  /** @param {string[]} codes @param {string} [message]
   * @param {(import("./types.js").Found & {file: string})[]} [found] the refusal in the
   *   reference's words, where they are known */
  constructor(codes, message, found = []) {
    super(message ?? codes.join(", "));
    this.codes = codes;
    this.found = found;
  }
}

/** Links among the session directory, state, .bak and lock that lead out of the root (SR105,
 * in the reference's words: the link's name and where it leads).
 * @param {string} dir @param {string} root */
export function checkPaths(dir, root) {
  const rootReal = real(root) ?? resolve(root);
  for (const p of [dir, join(dir, STATE), join(dir, BAK), join(dir, LOCK)]) {
    // where a link leads; a dangling link is judged by its text
    if (isLink(p)) refuseLinkOut(p, rootReal);
  }
  // A directory named inside the root whose real path is outside goes through a link.
  const dirReal = real(dir);
  if (dirReal !== null && isWithin(resolve(dir), resolve(root)) && !isWithin(dirReal, rootReal)) {
    throw new Refused(["SR105"]);
  }
}

/** A link at `p` leading out of the root, refused in the reference's words (SR105).
 * @param {string} p @param {string} rootReal */
function refuseLinkOut(p, rootReal) {
  const target = real(p) ?? resolve(dirname(p), linkText(p) ?? "");
  if (isWithin(target, rootReal)) return;
  const words = `${basename(p)} is a symbolic link leading outside the session's root (to ${strRepr(target)}); refusing to use it`;
  throw new Refused(["SR105"], words, [{ ...found("SR105", words), file: p }]);
}

/** Create the session directory `dir` (the reference's `make_session_dir`): each missing
 * component made in turn, walked from the root, so that nothing is created where a link out
 * of the root leads (SR105, nothing created). A directory outside the root (named
 * explicitly, so it exists: SR100 otherwise) is only made sure of.
 * @param {string} dir @param {string} root */
export function makeSessionDir(dir, root) {
  const base = resolve(root);
  const rootReal = real(root) ?? base;
  const target = resolve(dir);
  if (!isWithin(target, base)) {
    mkdirSync(target, { recursive: true });
  } else {
    let at = base;
    for (const part of relative(base, target).split(sep).filter(Boolean)) {
      at = join(at, part);
      if (isLink(at)) refuseLinkOut(at, rootReal);
      else if (!lexists(at)) mkdirSync(at);
    }
  }
  writeGitignore(target);
}

// The session directory's own `.gitignore` (spec §1), written when a session is new (no state
// yet) and none is there: the lock, the lease, the .bak, temp files and kept corrupt copies are
// this machine's, never committed (storage/store.py `GITIGNORE_TEXT`).
const GITIGNORE = ".gitignore";
const GITIGNORE_TEXT =
  "# Written by session-resume when it created this session (docs/spec.md §1): the lock,\n" +
  "# the lease, the .bak, temp files and kept corrupt copies are this machine's, never\n" +
  "# committed. The state, worklog, handoff and deliverables are.\n" +
  `${STATE}.lock\n${SENTINEL}\n${STATE}.bak\n.${STATE}.*.tmp\n${STATE}.corrupt-*\n`;

/** A new session's `.gitignore` (never over a file or through a link: an exclusive create).
 * @param {string} dir */
function writeGitignore(dir) {
  if (lexists(join(dir, STATE)) || lexists(join(dir, GITIGNORE))) return;
  try {
    writeFileSync(join(dir, GITIGNORE), GITIGNORE_TEXT, { flag: "wx" });
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code !== "EEXIST") throw err;
  }
}

/** The files a writer may create or replace in a session directory, besides the state. */
const WRITTEN_FILES = [LOCK, SENTINEL, WORKLOG, HANDOFF];

/** checkPaths and the path policy for every file a writer opens (docs/spec.md §1): each must
 * be a regular file or absent, never a link out of the root. Runs before anything is opened;
 * throws Refused (SR105/SR103/SR102). @param {string} dir @param {string} root */
export function checkWritePaths(dir, root) {
  checkPaths(dir, root);
  const codes = WRITTEN_FILES.map((n) => checkTarget(join(dir, n), root, { write: true })).filter(
    (c) => c !== null,
  );
  if (codes.length) throw new Refused(codes);
}

/** What bytes are as a state file: {status, doc, codes, version, found}; `found`: what was
 * found, in the reference's words and places (its store's `classify`: the reader's findings,
 * the version's, the current schema's), which `recover` reports.
 * @param {Uint8Array} data @returns {import("./types.js").Classified} */
export function classify(data) {
  const parsed = readJsonBytes(data);
  if (parsed.value === null || isCorrupt(parsed.codes))
    return { status: "corrupt", doc: null, codes: parsed.codes, found: parsed.found };
  const doc = parsed.value;
  const v = versionOf(doc);
  const at = "/schema_version";
  if (v.invalid) {
    const words = found("SR142", "schema_version is not a version string", at);
    return { status: "bad_version", doc, codes: ["SR142"], found: [words] };
  }
  if (newerThanKnown(v.num)) {
    const words = found("SR141", `schema version ${v.raw} is newer than ${CURRENT}`, at);
    return { status: "too_new", doc, codes: ["SR141"], version: v.raw, found: [words] };
  }
  if (!isKnown(v.raw)) {
    const words = found("SR142", `schema version ${v.raw} does not exist`, at);
    return { status: "bad_version", doc, codes: ["SR142"], found: [words] };
  }
  if (v.raw !== CURRENT) {
    const words = found("SR140", `schema version ${v.raw} must be migrated`);
    return { status: "needs_migration", doc, codes: ["SR140"], version: v.raw, found: [words] };
  }
  const errors = check(schemaOf(CURRENT), doc);
  if (errors.length)
    return {
      status: "invalid",
      doc,
      codes: errors,
      version: v.raw,
      found: explain(schemaOf(CURRENT), doc),
    };
  return { status: "ok", doc, codes: parsed.codes, version: v.raw, found: parsed.found };
}

/** A file worth keeping as .bak: it parses and passes its own version's schema.
 * @param {Uint8Array} data */
function validStateBytes(data) {
  const c = classify(data);
  if (c.status === "ok") return true;
  // needs_migration always names the version it was found at
  return c.status === "needs_migration" && check(schemaOf(String(c.version)), c.doc).length === 0;
}

/**
 * The one definition of a usable backup, shared by recover, resume and validate (docs/spec.md
 * §5): it parses and passes the 3.0 schema, or it is an older or repairable state that migrate
 * (without salvage) turns into one. {document (null: unusable), migratedFrom (null: 3.0
 * already), problems (codes: why it is unusable)}.
 * @param {Uint8Array} data
 * @param {{now?: number, projectHint?: string|null, sessionDir?: string|null}} [opts]
 * @returns {import("./types.js").Backup}
 */
export function usableBackup(
  data,
  { now = Date.now() * 1000, projectHint = null, sessionDir = null } = {},
) {
  const c = classify(data);
  if (c.status === "ok") return { document: c.doc, migratedFrom: null, problems: [], found: [] };
  if (!["needs_migration", "invalid"].includes(c.status) || c.doc === null) {
    return { document: null, migratedFrom: null, problems: c.codes, found: c.found ?? [] };
  }
  try {
    const res = migrate(c.doc, { now, projectHint, sessionDir });
    return { document: res.document, migratedFrom: res.from, problems: [], found: [] };
  } catch (err) {
    if (err instanceof MigrationError)
      return {
        document: null,
        migratedFrom: null,
        problems: err.codes,
        found: err.diagnostics.map((d) => found(d.code, d.message, d.pointer)),
      };
    if (err instanceof RangeError) {
      // the reference's words for a document nested too deep to migrate (its RecursionError)
      const words = found("SR152", "not migratable: maximum recursion depth exceeded");
      return { document: null, migratedFrom: null, problems: ["SR152"], found: [words] };
    }
    throw err;
  }
}

const dirName = (/** @type {string} */ dir) => basename(real(dir) ?? resolve(dir));

/** The reference's held reader's words for a state it did not open (storage/held.py). */
const UNREAD_WORDS = /** @type {Record<string, string>} */ ({
  SR101: "this is a directory, not a state file",
  SR102: "not a regular file (FIFO, socket or device)",
});

/** Why a file was not read, in the reference's words (its reader's) where they name the
 * file's size (SR112, over the default limit) or its kind, else the code's summary.
 * @param {string} code @param {string} path */
export function unreadWords(code, path) {
  if (UNREAD_WORDS[code]) return UNREAD_WORDS[code];
  if (code !== "SR112") return CODES[code]?.summary ?? "";
  try {
    return `the file is ${statSync(path).size} bytes; the limit is ${DEFAULT_MAX_SIZE}`;
  } catch {
    return `the file is over the limit of ${DEFAULT_MAX_SIZE} bytes`;
  }
}

/** Read the session's state; never throws for bad content.
 * @param {string} dir @param {string} root @returns {import("./types.js").Loaded} */
export function load(dir, root) {
  try {
    checkPaths(dir, root);
  } catch (err) {
    if (err instanceof Refused)
      return { status: "refused", doc: null, codes: err.codes, backupUsable: false };
    throw err;
  }
  const state = join(dir, STATE);
  /** @type {import("./types.js").Classified} */
  let out;
  if (!lexists(state)) out = { status: "absent", doc: null, codes: [] };
  else {
    const res = readLimited(state, { root });
    if (!res.data)
      out = {
        status: res.codes.includes("SR112") ? "corrupt" : "refused",
        doc: null,
        codes: res.codes,
        found: res.codes.map((code) => found(code, unreadWords(code, state))),
      };
    else out = classify(res.data);
  }
  let backupUsable = false;
  if ((out.status === "corrupt" || out.status === "absent") && lexists(join(dir, BAK))) {
    const b = readLimited(join(dir, BAK), { root });
    backupUsable =
      b.data !== undefined && usableBackup(b.data, { projectHint: dirName(dir) }).document !== null;
  }
  return Object.assign(out, { backupUsable });
}

/** The bytes of a state as every writer writes it. @param {StateDocument} doc */
export const serialize = (doc) => Buffer.from(`${JSON.stringify(doc, null, 2)}\n`);

/** @param {string} dir */
export function fsyncDir(dir) {
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // not every platform can fsync a directory
  }
}

/** A new temp file (O_EXCL, never following a link) in `dir` holding `data`, fsynced.
 * @param {string} dir @param {Uint8Array} data @param {string} [prefix] @returns {string} */
export function writeTemp(dir, data, prefix = `.${STATE}.`) {
  for (;;) {
    const tmp = join(dir, `${prefix}${randomBytes(6).toString("hex")}.tmp`);
    let fd;
    try {
      fd = openSync(
        tmp,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
        0o644,
      );
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code === "EEXIST") continue;
      throw err;
    }
    try {
      for (let off = 0; off < data.length; ) off += writeSync(fd, data, off); // short writes
      fsyncSync(fd);
    } catch (err) {
      closeSync(fd);
      try {
        unlinkSync(tmp);
      } catch {
        /* already gone */
      }
      throw err;
    }
    closeSync(fd);
    return tmp;
  }
}

/** @type {Set<string | undefined>} */
const NO_HARD_LINKS = new Set(["EPERM", "EXDEV", "ENOTSUP", "EMLINK", "EOPNOTSUPP"]);

/** Make `dst` an atomic copy of `src` (a hard link to a staging name, renamed over dst).
 * @param {string} src @param {string} dst */
function keepAs(src, dst) {
  try {
    const a = lstatSync(src);
    const b = lstatSync(dst);
    // A kill between rotation and replace leaves .bak and the state as one inode; rename()
    // between two links of one file is a no-op that would strand the staging name.
    if (a.dev === b.dev && a.ino === b.ino) return;
  } catch {
    // dst absent: nothing to compare
  }
  const dir = dirname(dst);
  let staging = join(dir, `.${STATE}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    linkSync(src, staging);
  } catch (err) {
    if (!NO_HARD_LINKS.has(/** @type {NodeJS.ErrnoException} */ (err).code)) throw err;
    staging = writeTemp(dir, readFileSync(src));
  }
  try {
    renameSync(staging, dst);
  } catch (err) {
    try {
      unlinkSync(staging);
    } catch {
      /* already gone */
    }
    throw err;
  }
  if (lexists(staging)) {
    try {
      unlinkSync(staging);
    } catch {
      /* already gone */
    }
  }
}

/** An OS refusal while writing (disk full, read-only, a directory in the way): SR163. */
function writeFailed(/** @type {unknown} */ err) {
  const e = /** @type {NodeJS.ErrnoException | null | undefined} */ (err);
  if (e && typeof e.code === "string" && typeof e.syscall === "string") {
    return new Refused(
      ["SR163"],
      `the state could not be written: ${e.message}; the previous state and .bak are unchanged`,
    );
  }
  return err;
}

/** Replace the state with `data`; with `rotate`, the current file becomes .bak if it is a
 * valid state (or, with `always`, whatever it is: the pre-migration file).
 * @param {string} dir @param {Uint8Array} data
 * @param {{rotate: boolean, always?: boolean, currentValid?: boolean | null}} opts */
export function replaceState(dir, data, { rotate, always = false, currentValid = null }) {
  const state = join(dir, STATE);
  let tmp;
  try {
    tmp = writeTemp(dir, data);
  } catch (err) {
    throw writeFailed(err);
  }
  try {
    if (rotate && lexists(state) && !isLink(state) && statSync(state).isFile()) {
      const keep =
        always || (currentValid !== null ? currentValid : validStateBytes(readFileSync(state)));
      if (keep) keepAs(state, join(dir, BAK));
    }
    renameSync(tmp, state);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw writeFailed(err);
  }
  fsyncDir(dir);
}

/** Append a worklog event after a write; a failure is SR505 (the state is already written).
 * @param {string} dir @param {string} event @param {Parameters<typeof appendEvent>[2]} opts
 * @returns {string[]} */
export function logEvent(dir, event, opts) {
  try {
    appendEvent(dir, event, opts);
    return [];
  } catch {
    return ["SR505"];
  }
}

/**
 * recover (spec §5): {status, codes}.
 * @param {string} dir @param {string} root
 * @param {{now: number, workflow?: string|null, project?: string|null}} opts
 * `found` and `backupFound`: what was found in the state and why the .bak was not usable, in
 * the reference's words (`codes` and `backupProblems`: their codes).
 * @returns {{status: "none" | "restored_backup" | "recreated" | "refused", codes: string[],
 *   found?: import("./types.js").Found[], keptAs?: string | null, migratedFrom?: string | null,
 *   preMigrationKeptAs?: string | null, backupProblems?: string[],
 *   backupFound?: import("./types.js").Found[]}}
 */
export function recover(dir, root, { now, workflow = null, project = null }) {
  try {
    checkWritePaths(dir, root);
  } catch (err) {
    if (err instanceof Refused) return { status: "refused", codes: err.codes, found: err.found };
    throw err;
  }
  return withLock(dir, () => recoverLocked(dir, root, { now, workflow, project }));
}

/**
 * recover's work, under the lock.
 * @param {string} dir @param {string} root
 * @param {{now: number, workflow?: string|null, project?: string|null}} opts
 * @returns {ReturnType<typeof recover>}
 */
function recoverLocked(dir, root, { now, workflow = null, project = null }) {
  const current = load(dir, root);
  // a state that cannot be read (a FIFO, a device, no permission) is not corrupt: refused
  if (current.status === "refused")
    return { status: "refused", codes: current.codes, found: current.found ?? [] };
  if (current.status !== "corrupt" && current.status !== "absent")
    return { status: "none", codes: current.codes, found: current.found ?? [] };
  const state = join(dir, STATE);
  let kept = null;
  if (current.status === "corrupt" && lexists(state)) {
    let name = `${STATE}.corrupt-${stamp(now)}`;
    for (let n = 2; lexists(join(dir, name)); n++) name = `${STATE}.corrupt-${stamp(now)}-${n}`;
    linkSync(state, join(dir, name));
    kept = name;
  }
  const ts = formatTimestamp(now);
  const reason = current.codes.join(",") || current.status;
  const backup = backupOf(dir, root, now);
  if (backup.document !== null) {
    // a 3.0 .bak is restored byte for byte, an older one migrated (docs/spec.md §5)
    const data =
      backup.migratedFrom === null ? readFileSync(join(dir, BAK)) : serialize(backup.document);
    // an older .bak is kept for good before it is migrated: the next write rotates .bak away
    const copy = backup.migratedFrom ? keepPreMigration(dir, backup.migratedFrom, BAK) : null;
    const pre = copy === null ? null : copy.path;
    try {
      replaceState(dir, data, { rotate: false });
    } catch (err) {
      if (copy?.made) rmSync(copy.path, { force: true });
      throw err;
    }
    const detail = {
      from: BAK,
      corrupt_kept_as: kept,
      reason,
      ...(backup.migratedFrom ? { migrated_from: backup.migratedFrom } : {}),
      ...(pre ? { pre_migration_kept_as: basename(pre) } : {}),
    };
    const extra = logEvent(dir, "recovered", { ts, detail });
    return {
      status: "restored_backup",
      codes: [...current.codes, ...extra],
      found: current.found ?? [],
      keptAs: kept,
      migratedFrom: backup.migratedFrom,
      preMigrationKeptAs: pre === null ? null : basename(pre),
      backupProblems: [],
      backupFound: [],
    };
  }
  const wf = loadWorkflow(workflow ?? "apex");
  const doc = templateState(wf, project ?? basename(real(dir) ?? dir), ts);
  doc.revision = 1;
  replaceState(dir, serialize(doc), { rotate: false });
  const extra = logEvent(dir, "recreated", {
    ts,
    detail: { corrupt_kept_as: kept, reason, workflow: wf.id },
  });
  return {
    status: "recreated",
    codes: [...current.codes, ...extra],
    found: current.found ?? [],
    keptAs: kept,
    migratedFrom: null,
    backupProblems: backup.problems,
    backupFound: backup.found,
  };
}

/** The session directory relative to the repository root, POSIX; null when it is outside
 * (what a bare artifact name is resolved against, spec §4, §9).
 * @param {string} dir @param {string | null | undefined} root @returns {string | null} */
export function repoRelative(dir, root) {
  if (!root) return null;
  const rel = relative(resolve(root), resolve(dir));
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** Names tried for the kept pre-migration file before a migration is refused. */
const PRE_MIGRATION_TRIES = 100;

/** The name the pre-migration file of a `version` state is kept under (the `n`-th free one
 * when `n`). @param {string} version @param {number} [n] */
export const preMigrationName = (version, n = 0) =>
  `00-session-state.v${version}${n ? `-${n}` : ""}.json`;

/** The pre-migration file of a `version` state (the state, or a `.bak` that recover migrates:
 * `source`), kept for good beside the state (spec §1, §5, §9.1 step 7); never over an existing
 * file. A name held by this state's copy (a regular file of the same bytes, no other name) is
 * that copy; one held by anything else (other bytes, a link, a directory) is never trusted:
 * the next free name is taken (`…v<version>-1.json`, …), and with none free the migration is
 * refused (SR163), as in the reference. Returns its path and whether this call made it.
 * @param {string} dir @param {string} version @param {string} [source]
 * @returns {{path: string, made: boolean}}
 */
export function keepPreMigration(dir, version, source = STATE) {
  const from = join(dir, source);
  const data = readFileSync(from);
  const own = lstatSync(from);
  for (let n = 0; n < PRE_MIGRATION_TRIES; n++) {
    const path = join(dir, preMigrationName(version, n));
    try {
      linkSync(from, path);
      return { path, made: true };
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== "EEXIST")
        throw new Refused(["SR163"], `the pre-migration file could not be kept: ${err}`);
    }
    if (isCopy(path, data, own)) return { path, made: false };
  }
  throw new Refused(
    ["SR163"],
    `the pre-migration file could not be kept: ${preMigrationName(version)} and its ${PRE_MIGRATION_TRIES - 1} numbered names are taken by files that are not this state's copy; nothing was migrated`,
  );
}

/** Whether `path` (taken) is this state's copy: a regular file, not a link, with no other
 * name (or the source's own file), holding `data`.
 * @param {string} path @param {Buffer} data @param {import("node:fs").Stats} own */
function isCopy(path, data, own) {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  if (!st.isFile()) return false;
  if (st.nlink > 1 && !(st.dev === own.dev && st.ino === own.ino)) return false;
  if (st.size !== data.length) return false;
  try {
    return readFileSync(path).equals(data);
  } catch {
    return false;
  }
}

/** The .bak to restore (3.0, or an older state migrated), or why there is none.
 * @param {string} dir
 * @param {string} root
 * @param {number} now
 * @returns {import("./types.js").Backup}
 */
function backupOf(dir, root, now) {
  if (!lexists(join(dir, BAK)))
    return { document: null, migratedFrom: null, problems: [], found: [] };
  const res = readLimited(join(dir, BAK), { root });
  if (!res.data) {
    const codes = res.codes ?? [];
    const words = codes.map((code) => found(code, unreadWords(code, join(dir, BAK))));
    return { document: null, migratedFrom: null, problems: codes, found: words };
  }
  return usableBackup(res.data, {
    now,
    projectHint: dirName(dir),
    sessionDir: repoRelative(dir, root),
  });
}
