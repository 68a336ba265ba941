// Reading files safely (spec §2.1 rows SR100-SR112, §1 links): never block on a FIFO, never
// follow a link out of the root, never read more than the size limit.

import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  readlinkSync,
  realpathSync,
  statSync,
} from "node:fs";
import { sep } from "node:path";

export const DEFAULT_MAX_SIZE = 8 * 1024 * 1024;

/** Whether `path` exists as anything (a dangling link too). @param {string} path */
export function lexists(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** @param {string} path */
export function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Whether `path` is `root` or inside it (both absolute).
 * @param {string} path
 * @param {string} root
 */
export function isWithin(path, root) {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** realpath, or null when the path (or a link on the way) leads nowhere.
 * @param {string} path @returns {string | null} */
export function real(path) {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/**
 * Read `path` whole, or say why not: {data} or {codes}.
 * @param {string} path @param {{maxSize?: number, root?: string | null}} [opts]
 * @returns {{data: Buffer, codes?: undefined} | {data?: undefined, codes: string[]}}
 */
export function readLimited(path, { maxSize = DEFAULT_MAX_SIZE, root = null } = {}) {
  let lst;
  try {
    lst = lstatSync(path);
  } catch (err) {
    return {
      codes: [/** @type {NodeJS.ErrnoException} */ (err).code === "ENOENT" ? "SR100" : "SR104"],
    };
  }
  if (lst.isSymbolicLink()) {
    const target = real(path);
    if (target === null) return { codes: ["SR103"] };
    if (root !== null) {
      const r = real(root) ?? root;
      if (!isWithin(target, r)) return { codes: ["SR105"] };
    }
  }
  let st;
  try {
    st = statSync(path);
  } catch {
    return { codes: ["SR104"] };
  }
  if (st.isDirectory()) return { codes: ["SR101"] };
  if (!st.isFile()) return { codes: ["SR102"] };
  if (st.size > maxSize) return { codes: ["SR112"] };
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return { codes: ["SR104"] };
  }
  try {
    if (!fstatSync(fd).isFile()) return { codes: ["SR102"] };
    const chunks = [];
    let total = 0;
    const buf = Buffer.alloc(1 << 16);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
      total += n;
      if (total > maxSize) return { codes: ["SR112"] };
    }
    return { data: Buffer.concat(chunks) };
  } catch {
    return { codes: ["SR104"] };
  } finally {
    closeSync(fd);
  }
}

/** A link's text, or null. @param {string} path */
export function linkText(path) {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/** The path policy applied before a session file is opened (docs/spec.md §1): a link is
 * followed only when it stays inside `root`, and a file to write must be a regular file or
 * absent. null when the path may be used; else SR105 (a link out of the root), SR103 (a
 * dangling link), SR104 (cannot stat) or SR102 (not a regular file).
 * @param {string} path @param {string | null} root @param {{write: boolean}} opts
 * @returns {string | null} */
export function checkTarget(path, root, { write }) {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === "ENOENT" ? null : "SR104";
  }
  if (st.isSymbolicLink()) {
    const target = real(path);
    const rootReal = root === null ? null : (real(root) ?? root);
    if (rootReal === null || (target !== null && !isWithin(target, rootReal))) return "SR105";
    if (target === null) return "SR103";
    try {
      st = statSync(path);
    } catch {
      return "SR104";
    }
  }
  if (write && !st.isFile()) return "SR102";
  return null;
}

/** The strerror Python gives the errors a file operation may meet (its messages quote it). */
const STRERROR = /** @type {Record<string, string>} */ ({
  ENOENT: "No such file or directory",
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  EEXIST: "File exists",
  ELOOP: "Too many levels of symbolic links",
  ENOTDIR: "Not a directory",
  EISDIR: "Is a directory",
  ENOTEMPTY: "Directory not empty",
  ENXIO: "No such device or address",
  EIO: "Input/output error",
  ENAMETOOLONG: "File name too long",
  EAGAIN: "Resource temporarily unavailable",
  ENOSPC: "No space left on device",
  EROFS: "Read-only file system",
  EXDEV: "Invalid cross-device link",
});

/** An OS error in Python's words (its strerror), else Node's message. @param {unknown} err */
export function strerror(err) {
  const e = /** @type {NodeJS.ErrnoException | undefined} */ (err);
  return (e?.code && STRERROR[e.code]) ?? e?.message;
}
