// The write lock of a session directory (spec §4: read-modify-write under a lock that is never
// the file being replaced).
//
// The reference takes an advisory flock(2) on 00-session-state.json.lock. Node has no flock
// (nor fcntl locks) without a native addon, and this package has no native code, so it locks
// with a file created exclusively (O_EXCL) beside it, 00-session-state.json.jslock, holding
// the holder's pid, host and time, removed on release. A lock whose holder is dead on this host,
// or older than STALE_MS, is broken (a crashed writer must not block the session forever).
//
// Limit (docs in README.md): the two locks do not see each other, so a JavaScript writer and a
// Python writer are not excluded from one another by the lock. The revision check under each
// lock (SR162, lost-update detection) still refuses a save based on a state that changed
// since it was read, but the window between that check and the replace is not covered.

import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

export const JS_LOCK = "00-session-state.json.jslock";
const STALE_MS = 60_000;
const WAIT_STEP_MS = 10;

export class LockError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.codes = ["SR160"];
  }
}

const sleep = (/** @type {number} */ ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** @param {string} path */
function holderGone(path) {
  let info;
  try {
    info = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return false; // being written, or gone already: look again
  }
  if (Date.now() - Number(info.since) > STALE_MS) return true;
  if (info.host !== hostname() || !Number.isInteger(info.pid)) return false;
  try {
    process.kill(info.pid, 0);
    return false;
  } catch (err) {
    return /** @type {any} */ (err).code === "ESRCH";
  }
}

/**
 * Run `fn` holding the session directory's lock; SR160 when it cannot be taken in `timeoutMs`.
 * @template T
 * @param {string} dir @param {() => T} fn @param {{timeoutMs?: number}} [opts]
 * @returns {T}
 */
export function withLock(dir, fn, { timeoutMs = 30_000 } = {}) {
  const path = join(dir, JS_LOCK);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  let waited = 0;
  let fd;
  for (;;) {
    try {
      fd = openSync(path, flags, 0o644);
      break;
    } catch (err) {
      const code = /** @type {any} */ (err).code;
      if (code !== "EEXIST") throw new LockError(`cannot use ${JS_LOCK} as a lock file: ${code}`);
      if (holderGone(path)) {
        try { unlinkSync(path); } catch { /* another writer broke it first */ }
        continue;
      }
      if (waited >= timeoutMs) throw new LockError(`could not take the lock ${JS_LOCK} within ${timeoutMs / 1000} s`);
      sleep(WAIT_STEP_MS);
      waited += WAIT_STEP_MS;
    }
  }
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: Date.now() }));
  } finally {
    closeSync(fd);
  }
  try {
    return fn();
  } finally {
    try { unlinkSync(path); } catch { /* already gone */ }
  }
}
