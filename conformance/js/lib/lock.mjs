// The write lock of a session directory (spec §4: read-modify-write under a lock that is never
// the file being replaced).
//
// The reference takes an advisory flock(2) on 00-session-state.json.lock. Node has no flock
// without a native addon, and this package has no native code. Where the util-linux `flock`
// command exists (Linux), the lock is that same flock, held by a child process: `flock` opens
// the lock file, takes the lock, says so, and holds it while a `cat` reads this process's pipe;
// the lock is released by killing that process group (or, should this process die, when the
// pipe closes). A Python writer and a JavaScript writer then exclude each other.
//
// Without `flock` (macOS, Windows) or with SESSION_RESUME_JS_LOCK=file, the lock is a file
// created exclusively (O_EXCL) beside it, 00-session-state.json.jslock, holding the holder's
// pid, host and time, removed on release; a lock whose holder is dead on this host, or older
// than STALE_MS, is broken. That lock excludes JavaScript writers from one another only; the
// revision check (SR162) is then all that guards against a Python writer's lost update.

import { spawn } from "node:child_process";
import {
  accessSync,
  closeSync,
  constants,
  lstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { STATE } from "./session.mjs";

export const LOCK = `${STATE}.lock`;
export const JS_LOCK = `${STATE}.jslock`;
const STALE_MS = 60_000;
const WAIT_STEP_MS = 10;

export class LockError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.codes = ["SR160"];
  }
}

/** $SESSION_RESUME_LOCK_TIMEOUT (seconds) or 30 s, as long as the reference waits. */
function lockTimeout() {
  const v = Number(process.env.SESSION_RESUME_LOCK_TIMEOUT);
  return Number.isFinite(v) && v > 0 ? v * 1000 : 30_000;
}

const sleep = (/** @type {number} */ ms) =>
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

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
    return /** @type {NodeJS.ErrnoException} */ (err).code === "ESRCH";
  }
}

/** The `flock` command, or null (then the exclusive lock file is used). */
function flockCommand() {
  if (process.platform === "win32" || process.env.SESSION_RESUME_JS_LOCK === "file") return null;
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    if (!d) continue;
    try {
      accessSync(join(d, "flock"), constants.X_OK);
      return join(d, "flock");
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Take the reference's flock on `path` through the `flock` command; returns the release.
 * @param {string} flock @param {string} path @param {number} timeoutMs
 */
function takeFlock(flock, path, timeoutMs) {
  const spool = mkdtempSync(join(tmpdir(), "session-resume-lock-"));
  const said = join(spool, "said");
  const out = openSync(said, "w");
  let child;
  try {
    // flock says nothing when it times out: the shell around it says so
    const script =
      '"$3" -w "$1" "$2" sh -c "echo locked; exec cat >/dev/null" || echo "failed (exit $?)"';
    child = spawn("sh", ["-c", script, "sh", String(Math.max(timeoutMs, 1) / 1000), path, flock], {
      stdio: ["pipe", out, out],
      detached: true, // its own process group: released by killing the group
    });
  } finally {
    closeSync(out);
  }
  const release = () => {
    try {
      process.kill(-(/** @type {number} */ (child.pid)), "SIGKILL");
    } catch {
      /* gone */
    }
    child.stdin?.destroy();
    child.unref();
    rmSync(spool, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs + 5_000;
  for (;;) {
    let text = "";
    try {
      text = readFileSync(said, "utf8");
    } catch {
      /* not yet */
    }
    if (text.startsWith("locked")) return release;
    if (text.includes("failed") || child.pid === undefined || Date.now() > deadline) {
      release();
      const why =
        text.includes("failed (exit 1)") || !text
          ? `within ${timeoutMs / 1000} s`
          : `: ${text.trim()}`;
      throw new LockError(`could not take the lock ${LOCK} ${why}`);
    }
    sleep(2);
  }
}

const PROTOCOL = [STATE, `${STATE}.bak`, "00-worklog.jsonl", "00-session.active"];

/** The identity of the protocol files (inode, size, modification and change times).
 * @param {string} dir */
function protocolStats(dir) {
  return PROTOCOL.map((name) => {
    try {
      const st = lstatSync(join(dir, name), { bigint: true });
      return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch {
      return "";
    }
  }).join("|");
}

/** The reference's record of its own writes (`.00-session-written/record.json`, Python's
 * storage/written.py): its host hooks put back a protocol file that differs from it, so a
 * write made here would be undone. A locked block here that changed a protocol file removes
 * that record (no record, no check, until the reference writes again); never through a link.
 * A block that wrote nothing (a refusal) leaves it.
 * @param {string} dir */
export function forgetRecord(dir) {
  const recordDir = join(dir, ".00-session-written");
  try {
    if (!lstatSync(recordDir).isDirectory()) return;
    unlinkSync(join(recordDir, "record.json"));
  } catch {
    /* no record */
  }
}

/** `fn()`, then the record forgotten if it changed a protocol file.
 * @template T @param {string} dir @param {() => T} fn @returns {T} */
function recorded(dir, fn) {
  const before = protocolStats(dir);
  try {
    return fn();
  } finally {
    if (protocolStats(dir) !== before) forgetRecord(dir);
  }
}

/**
 * Run `fn` holding the session directory's lock; SR160 when it cannot be taken in `timeoutMs`.
 * @template T
 * @param {string} dir @param {() => T} fn @param {{timeoutMs?: number}} [opts]
 * @returns {T}
 */
export function withLock(dir, fn, { timeoutMs = lockTimeout() } = {}) {
  const flock = flockCommand();
  if (flock !== null) {
    const release = takeFlock(flock, join(dir, LOCK), timeoutMs);
    try {
      return recorded(dir, fn);
    } finally {
      release();
    }
  }
  const path = join(dir, JS_LOCK);
  const flags =
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  let waited = 0;
  let fd;
  for (;;) {
    try {
      fd = openSync(path, flags, 0o644);
      break;
    } catch (err) {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      if (code !== "EEXIST") throw new LockError(`cannot use ${JS_LOCK} as a lock file: ${code}`);
      if (holderGone(path)) {
        try {
          unlinkSync(path);
        } catch {
          /* another writer broke it first */
        }
        continue;
      }
      if (waited >= timeoutMs)
        throw new LockError(`could not take the lock ${JS_LOCK} within ${timeoutMs / 1000} s`);
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
    return recorded(dir, fn);
  } finally {
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  }
}
