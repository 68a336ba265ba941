// Which diagnostics a `validate` run reports (the reference's core/selection.py): `select`,
// `ignore` and `per-file-ignores`, as ruff's, from the command line and the configuration. Read
// errors (SR1xx) are always reported: a file that cannot be read is never called valid.

import { realpathSync } from "node:fs";
import { relative, resolve } from "node:path";
import { realOrAbsolute } from "./config.mjs";

/** @typedef {{select: string[] | null, ignore: string[], perFile: [PathGlob, string[]][]}} Selection */

/** @typedef {{test: (path: string) => boolean}} PathGlob */

/** A path glob as the reference's `PathGlob`: `**` and a slash, any number of directories, `**`
 * anything, `*` and `?` within one directory, every other character itself. Matched in one
 * pass over the path carrying the set of pattern positions still alive (a BigInt bit mask),
 * never backtracking (the regular expression this replaced backtracked for hours on
 * `**a**a…**c` and a 40-character path). Runs of stars collapse as in the reference.
 * @param {string} glob @returns {PathGlob} */
export function globRegex(glob) {
  /** @type {Map<string, bigint>} */
  const lit = new Map();
  let one = 0n; // `?`
  let seg = 0n; // `*`
  let any = 0n; // `**`
  let skip = 0n; // the entry of `**` and a slash: on to its `**`, or past its slash
  let pos = 0n;
  let last = "";
  const bit = (/** @type {bigint} */ p) => 1n << p;
  const addLit = (/** @type {string} */ ch, /** @type {bigint} */ p) =>
    lit.set(ch, (lit.get(ch) ?? 0n) | bit(p));
  const chars = [...glob];
  for (let i = 0; i < chars.length; ) {
    if (chars[i] === "*" && chars[i + 1] === "*" && chars[i + 2] === "/") {
      i += 3;
      if (last === "**" || last === "**/") continue;
      skip |= bit(pos);
      any |= bit(pos + 1n);
      addLit("/", pos + 2n);
      pos += 3n;
      last = "**/";
    } else if (chars[i] === "*") {
      const double = chars[i + 1] === "*";
      i += double ? 2 : 1;
      if (last === "**") continue;
      if (last === "*") {
        if (double) {
          seg &= ~bit(pos - 1n);
          any |= bit(pos - 1n);
          last = "**";
        }
        continue;
      }
      if (double) any |= bit(pos);
      else seg |= bit(pos);
      pos += 1n;
      last = double ? "**" : "*";
    } else {
      if (chars[i] === "?") one |= bit(pos);
      else addLit(chars[i], pos);
      pos += 1n;
      i += 1;
      last = "";
    }
  }
  const accept = bit(pos);
  const onward = seg | any | skip;
  const closure = (/** @type {bigint} */ alive) => {
    for (;;) {
      const more = alive | ((alive & onward) << 1n) | ((alive & skip) << 3n);
      if (more === alive) return alive;
      alive = more;
    }
  };
  return {
    test(path) {
      let alive = closure(1n);
      for (const ch of path) {
        const step =
          ch === "/"
            ? ((alive & (lit.get(ch) ?? 0n)) << 1n) | (alive & any)
            : ((alive & ((lit.get(ch) ?? 0n) | one)) << 1n) | (alive & (seg | any));
        if (step === 0n) return false;
        alive = closure(step);
      }
      return (alive & accept) !== 0n;
    },
  };
}

/** A report's path relative to the repository root (POSIX), as per-file globs match it; null
 * outside the root. @param {string} path @param {string} root */
export function repoPath(path, root) {
  let real;
  try {
    real = realpathSync(path);
  } catch {
    real = resolve(path);
  }
  const base = realOrAbsolute(root);
  if (real !== base && !real.startsWith(`${base}/`)) return null;
  return relative(base, real) || ".";
}

/** @param {string} code @param {string[]} selectors */
const matches = (code, selectors) => selectors.some((s) => s === "ALL" || code.startsWith(s));

/** Whether a finding of `code` (in the file at repository path `path`) is reported; read
 * errors (SR1xx) always are. @param {string} code @param {Selection} selection
 * @param {string | null} path */
export function kept(code, selection, path) {
  if (code.startsWith("SR1")) return true;
  if (selection.select !== null && !matches(code, selection.select)) return false;
  if (matches(code, selection.ignore)) return false;
  if (path !== null)
    for (const [glob, codes] of selection.perFile)
      if (glob.test(path) && matches(code, codes)) return false;
  return true;
}
