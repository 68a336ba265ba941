// Which diagnostics a `validate` run reports (the reference's core/selection.py): `select`,
// `ignore` and `per-file-ignores`, as ruff's, from the command line and the configuration. Read
// errors (SR1xx) are always reported: a file that cannot be read is never called valid.

import { realpathSync } from "node:fs";
import { relative, resolve } from "node:path";
import { realOrAbsolute } from "./config.mjs";

/** @typedef {{select: string[] | null, ignore: string[], perFile: [RegExp, string[]][]}} Selection */

/** A path glob as the reference's `glob_regex`: `**` any number of directories, `*` and `?`
 * within one. @param {string} glob */
export function globRegex(glob) {
  let out = "";
  const chars = [...glob];
  for (let i = 0; i < chars.length; ) {
    const rest = chars.slice(i, i + 3).join("");
    if (rest === "**/") {
      out += "(?:.*/)?";
      i += 3;
    } else if (rest.startsWith("**")) {
      out += ".*";
      i += 2;
    } else if (chars[i] === "*") {
      out += "[^/]*";
      i += 1;
    } else if (chars[i] === "?") {
      out += "[^/]";
      i += 1;
    } else {
      out += chars[i].replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      i += 1;
    }
  }
  return new RegExp(`^(?:${out})$`, "u");
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
