// The repository root, found as the reference finds it (storage/config.py `find_root`,
// docs/config.md): from a directory upwards, the first one holding the configuration file
// `.session-resume.yaml`, a pyproject.toml with a `[tool.session-resume]` table, or `.git`;
// none: the directory itself. This implementation reads no configuration: only where it is.

import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export const CONFIG_FILE = ".session-resume.yaml";
const TOOL_TABLE =
  /^\s*\[\s*tool\s*\.\s*(?:session-resume|"session-resume"|'session-resume')\s*[\].]/m;

/** Whether `path` exists as anything (a dangling link too). @param {string} path */
function present(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether the pyproject.toml at `path` configures this tool. @param {string} path */
function configures(path) {
  try {
    return TOOL_TABLE.test(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
}

/** The real path of `p`, or its absolute form when it does not exist. @param {string} p */
export function realOrAbsolute(p) {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** The repository root of directory `start`. @param {string} start @returns {string} */
export function findRoot(start) {
  const first = realOrAbsolute(start);
  for (let d = first; ; d = dirname(d)) {
    if (present(join(d, CONFIG_FILE))) return d;
    const py = join(d, "pyproject.toml");
    if (present(py) && configures(py)) return d;
    if (present(join(d, ".git"))) return d;
    if (dirname(d) === d) return first;
  }
}

/** The root of the repository `path` is in: found from its nearest existing directory
 * upwards (docs/config.md: the session's repository, not the current directory's).
 * @param {string} path */
export function rootNear(path) {
  let d = resolve(path);
  for (;;) {
    try {
      if (statSync(d).isDirectory()) break;
    } catch {
      // not there: its parent
    }
    if (dirname(d) === d) break;
    d = dirname(d);
  }
  return findRoot(d);
}
