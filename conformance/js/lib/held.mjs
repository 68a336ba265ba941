// A directory held by its descriptor, for archiving (the twin of the reference's
// storage/held.py, reduced to what `init --fresh` does). Node has no openat/renameat/unlinkat;
// on Linux `/proc/self/fd/N` names the very directory descriptor N holds, whatever was renamed
// or swapped for a link along its path since, so each operation below is relative to a held
// directory as the *at() calls are: a parent replaced by a link between a check and a move
// cannot send a file (or a removal) outside the session's root. Where that name does not
// exist (macOS, Windows), `available()` is false and archiving is refused.

import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";

const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Whether this platform names a held directory (Linux's /proc/self/fd). */
export function available() {
  return process.platform === "linux" && existsSync("/proc/self/fd");
}

/** Whether `name` is a plain entry name (no separator, not `.` or `..`, no NUL).
 * @param {string} name */
function plain(name) {
  return name !== "" && name !== "." && name !== ".." && !/[/\0]/.test(name);
}

export class HeldDir {
  /** @param {number} fd @param {string} path the directory's name for messages */
  constructor(fd, path) {
    this.fd = fd;
    this.path = path;
  }

  /** Hold the directory `path` (a link to it is followed: the caller judged it). */
  static open(/** @type {string} */ path) {
    return new HeldDir(openSync(path, DIR_FLAGS), path);
  }

  /** Where the held directory really is now (resolved by the kernel from the descriptor). */
  real() {
    return readlinkSync(`/proc/self/fd/${this.fd}`);
  }

  /** The path that reaches `name` inside the held directory (and nowhere else).
   * @param {string} [name] */
  at(name) {
    if (name !== undefined && !plain(name)) throw new Error(`not a plain name: ${name}`);
    return name === undefined ? `/proc/self/fd/${this.fd}` : `/proc/self/fd/${this.fd}/${name}`;
  }

  /** The name the messages give `name`. @param {string} name */
  name(name) {
    return join(this.path, name);
  }

  /** lstat of `name`, null when absent. @param {string} name */
  stat(name) {
    try {
      return lstatSync(this.at(name));
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code === "ENOENT") return null;
      throw err;
    }
  }

  listdir() {
    return readdirSync(this.at());
  }

  /** Hold the directory `name` inside this one, never through a link (made when missing
   * and `create`). Throws the OS error (ELOOP/ENOTDIR for a link or a file). */
  sub(/** @type {string} */ name, { create = false } = {}) {
    if (create) {
      try {
        mkdirSync(this.at(name), 0o755);
      } catch (err) {
        if (/** @type {NodeJS.ErrnoException} */ (err).code !== "EEXIST") throw err;
      }
    }
    const fd = openSync(this.at(name), DIR_FLAGS | NOFOLLOW);
    if (!fstatSync(fd).isDirectory()) {
      closeSync(fd);
      throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    }
    return new HeldDir(fd, this.name(name));
  }

  /** Make the directory `name`; EEXIST when something is there (a link is not followed). */
  mkdir(/** @type {string} */ name) {
    mkdirSync(this.at(name), 0o755);
  }

  /** Rename `src` here to `dst` in `into` (a rename between two held directories: atomic,
   * a link at either name moved or replaced, never followed). */
  replace(/** @type {string} */ src, /** @type {string} */ dst, into = this) {
    renameSync(this.at(src), into.at(dst));
  }

  rmdir(/** @type {string} */ name) {
    rmdirSync(this.at(name));
  }

  /** Remove the directory `name` and everything below it, each level held in turn: a link
   * inside is removed, never followed. */
  rmtree(/** @type {string} */ name) {
    const sub = this.sub(name);
    try {
      for (const entry of sub.listdir()) {
        const st = sub.stat(entry);
        if (st?.isDirectory()) sub.rmtree(entry);
        else if (st) unlinkSync(sub.at(entry));
      }
    } finally {
      sub.close();
    }
    this.rmdir(name);
  }

  /** Make this directory's entries durable. */
  fsync() {
    fsyncSync(this.fd);
  }

  close() {
    closeSync(this.fd);
  }
}
