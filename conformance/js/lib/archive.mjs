// Archive a session's files into `.archive/<UTC stamp>_<label>/` and prune old archives, for
// `init --fresh` (a port of the reference's storage/archive.py, the lease left in place: the
// same session goes on). Only the protocol's own files move (state, .bak, handoff, worklog,
// kept corrupt files, pre-migration copies, leftover temp files); artifacts stay. Nothing is
// deleted but archives beyond the retention count, and never the archive this command has
// just made, a folder whose name this module does not make, or one stamped later than the
// command's own time.
//
// Every operation is relative to the session directory held once (lib/held.mjs), under the
// session's lock: `.archive` and each archive folder are held without following a link, the
// moves are renames between two held directories, and pruning removes a folder level by
// level, never following a link inside it. The moves are all or nothing: a move that fails
// puts back the files already moved, so a refused command leaves the session as it was.

import { join } from "node:path";
import { isWithin, real, strerror } from "./files.mjs";
import { byCodePoint } from "./findings.mjs";
import { available, HeldDir } from "./held.mjs";
import { withLock } from "./lock.mjs";
import { HANDOFF } from "./handoff.mjs";
import { SENTINEL, STATE, WORKLOG } from "./session.mjs";
import { stamp } from "./timeutil.mjs";

export const ARCHIVE_DIR = ".archive";
const BAK = `${STATE}.bak`;
const SESSION_FILES = new Set([STATE, BAK, HANDOFF, WORKLOG, SENTINEL]);
const PRE_MIGRATION = /^00-session-state\.v[0-9]+\.[0-9]+(?:-[0-9]{1,2})?\.json$/;
const TMP_PREFIX = `.${STATE}.`;
const NAME = /^([0-9]{8}T[0-9]{6}Z)_[A-Za-z0-9._-]+$/;

/** A refusal: the reference's diagnostics ({code, message, file}). */
export class ArchiveError extends Error {
  /** @param {{code: string, message: string, file: string}[]} problems */
  constructor(problems) {
    super(problems.map((p) => `${p.code} ${p.message}`).join("; "));
    this.problems = problems;
  }
}

/** A folder label: each character outside [A-Za-z0-9._-] a `-`, at most 64.
 * @param {string} label */
const cleanLabel = (label) => [...label.replace(/[^A-Za-z0-9._-]/gu, "-")].slice(0, 64).join("");

/** @param {string} n @param {boolean} includeLease */
function isSessionFile(n, includeLease) {
  if (n === SENTINEL && !includeLease) return false;
  return (
    SESSION_FILES.has(n) ||
    n.startsWith(`${STATE}.corrupt-`) ||
    PRE_MIGRATION.test(n) ||
    (n.startsWith(TMP_PREFIX) && n.endsWith(".tmp"))
  );
}

/**
 * Move the session's protocol files (the lease aside) into a new archive folder under the
 * session lock, then keep only the newest `keep` archives (the new one counts, and is never
 * pruned). Returns the folder's path, or null when there was nothing to archive. Throws
 * ArchiveError (SR102/SR105/SR164), the session left as it was.
 * @param {string} dir the session directory (checked: no link out of `root`)
 * @param {{now: number, keep: number, label: string, root: string}} opts
 * @returns {string | null}
 */
export function archiveSession(dir, { now, keep, label, root }) {
  if (!available()) {
    throw new ArchiveError([
      {
        code: "SR164",
        message:
          "init --fresh moves files relative to the held session directory, which needs /proc/self/fd (Linux) in this package; nothing was archived or written. Run the same command with the reference CLI (the Python package session-resume), or move the session's files aside by hand",
        file: join(dir, STATE),
      },
    ]);
  }
  return withLock(dir, () => {
    const h = HeldDir.open(dir);
    try {
      const rootReal = real(root) ?? root;
      if (!isWithin(h.real(), rootReal)) {
        throw new ArchiveError([
          {
            code: "SR105",
            message: `the session directory leads outside the session's root (to '${h.real()}'); refusing to archive it`,
            file: dir,
          },
        ]);
      }
      return archiveHeld(h, dir, { now, keep, label });
    } finally {
      h.close();
    }
  });
}

/** @param {HeldDir} h @param {string} dir
 * @param {{now: number, keep: number, label: string}} opts */
function archiveHeld(h, dir, { now, keep, label }) {
  const names = h
    .listdir()
    .filter((n) => isSessionFile(n, false))
    .sort(byCodePoint);
  let made = null;
  if (names.length) {
    const madeArchiveDir = h.stat(ARCHIVE_DIR) === null;
    const base = holdArchiveDir(h, true);
    try {
      made = makeFolder(base, `${stamp(now)}_${cleanLabel(label) || "session"}`);
      const target = base.sub(made);
      try {
        moveAll(h, target, names, made, madeArchiveDir);
        target.fsync();
      } finally {
        target.close();
      }
      base.fsync();
      h.fsync();
    } finally {
      base.close();
    }
  }
  pruneHeld(h, keep, now, made);
  return made === null ? null : join(dir, ARCHIVE_DIR, made);
}

/** Hold `.archive` (made when `create`); a link or a file there is refused.
 * @param {HeldDir} h @param {boolean} create */
function holdArchiveDir(h, create) {
  const st = h.stat(ARCHIVE_DIR);
  if (st !== null && !st.isDirectory()) {
    throw new ArchiveError([
      {
        code: st.isSymbolicLink() ? "SR105" : "SR102",
        message: ".archive is not a plain directory; refusing to archive into it",
        file: h.name(ARCHIVE_DIR),
      },
    ]);
  }
  try {
    return h.sub(ARCHIVE_DIR, { create });
  } catch (err) {
    throw new ArchiveError([
      {
        code: "SR164",
        message: `cannot create the directory: ${strerror(err)}`,
        file: h.name(ARCHIVE_DIR),
      },
    ]);
  }
}

/** Make the folder `stem` (else `stem-2`, `stem-3`, ...). @param {HeldDir} base
 * @param {string} stem */
function makeFolder(base, stem) {
  for (let n = 1; ; n++) {
    const name = n === 1 ? stem : `${stem}-${n}`;
    try {
      base.mkdir(name);
      return name;
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== "EEXIST") throw err;
    }
  }
}

/** Move `moved` back from `target`, newest first; the names that could not be.
 * @param {HeldDir} h @param {HeldDir} target @param {string[]} moved */
function putBack(h, target, moved) {
  const failed = [];
  for (const entry of [...moved].reverse()) {
    try {
      target.replace(entry, entry, h);
    } catch {
      failed.push(entry);
    }
  }
  return failed;
}

/** Remove the emptied folder `made`, and `.archive` when this command made it.
 * @param {HeldDir} h @param {string} made @param {boolean} madeArchiveDir */
function removeFolder(h, made, madeArchiveDir) {
  try {
    const base = holdArchiveDir(h, false);
    try {
      base.rmtree(made); // empty directories only: every file was moved back
      base.fsync();
    } finally {
      base.close();
    }
  } catch {
    // what stays is an empty folder: the refusal names the session as it was
  }
  if (madeArchiveDir) {
    try {
      h.rmdir(ARCHIVE_DIR);
    } catch {
      // not empty (another archive arrived) or gone: either way nothing of the session's
    }
  }
}

/** Rename every name into `target`, or none (the refusal says nothing was archived).
 * @param {HeldDir} h @param {HeldDir} target @param {string[]} names @param {string} made
 * @param {boolean} madeArchiveDir */
function moveAll(h, target, names, made, madeArchiveDir) {
  /** @type {string[]} */
  const moved = [];
  for (const entry of names) {
    try {
      h.replace(entry, entry, target);
      moved.push(entry);
    } catch (err) {
      const failed = putBack(h, target, moved);
      if (!failed.length) removeFolder(h, made, madeArchiveDir);
      const where = failed.length
        ? `${failed.join(", ")} could not be moved back from .archive/${made}`
        : "the session is as it was";
      throw new ArchiveError([
        {
          code: "SR164",
          message: `${entry} could not be archived: ${strerror(err)}; nothing was archived (${where})`,
          file: h.name(entry),
        },
      ]);
    }
  }
}

/** Delete the oldest archives beyond `keep`: folders named as this module names them,
 * stamped no later than `now`, plain directories, never `made` (which counts as one kept).
 * @param {HeldDir} h @param {number} keep @param {number} now @param {string | null} made */
function pruneHeld(h, keep, now, made) {
  if (keep < 0) return [];
  const st = h.stat(ARCHIVE_DIR);
  if (st === null || !st.isDirectory()) return [];
  const latest = stamp(now);
  const base = h.sub(ARCHIVE_DIR);
  try {
    const candidates = [];
    for (const n of base.listdir()) {
      const m = NAME.exec(n);
      if (m === null || n === made || m[1] > latest) continue;
      let lst;
      try {
        lst = base.stat(n);
      } catch {
        continue;
      }
      if (lst?.isDirectory()) candidates.push(n);
    }
    const ordered = candidates.sort(byCodePoint);
    const room = keep - (made !== null ? 1 : 0);
    const doomed = ordered.slice(0, Math.max(0, ordered.length - Math.max(room, 0)));
    for (const name of doomed) base.rmtree(name);
    if (doomed.length) base.fsync();
    return doomed;
  } finally {
    base.close();
  }
}
