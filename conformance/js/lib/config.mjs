// The project configuration, read as the reference reads it (storage/config.py, docs/config.md):
// `.session-resume.yaml`, or the `[tool.session-resume]` table of a pyproject.toml, looked up
// from a directory upwards; the first directory holding one of them (or `.git`) is the
// repository root. Every key is checked as the reference checks it, and a bad file is refused
// with the reference's code (SR405, SR105), words, file, line and hint: the file is repository
// content, read only when it is a regular file (or a link to one inside its own directory) of
// at most MAX_CONFIG_BYTES, and no value may lead outside the repository.

import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { floatRepr, strRepr } from "./findings.mjs";
import { firstInvalidUtf8 } from "./jsonread.mjs";
import { DEFAULT_MAX_SIZE, isWithin, strerror } from "./files.mjs";
import { builtins, loadWorkflow, WorkflowError } from "./workflow.mjs";
import { parseYaml, YamlError } from "./yaml.mjs";
import { keyAsWritten, YamlFloat } from "./yamlpy.mjs";

export const CONFIG_FILE = ".session-resume.yaml";
export const MAX_CONFIG_BYTES = 1024 * 1024;
export const CONFIG_DOC = "docs/config.md";
const MAX_TOML_DEPTH = 64;
const DAY = 86400;

/** @typedef {{code: string, message: string, file: string, line?: number | null,
 *   column?: number | null, hint: string}} ConfigDiagnostic */

export class ConfigError extends Error {
  /** @param {ConfigDiagnostic} diagnostic */
  constructor(diagnostic) {
    super(diagnostic.message);
    this.diagnostic = diagnostic;
  }
}

/** Thousands separated by commas, as Python's `{:,}`. @param {number} n */
const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/**
 * The keys, as the reference's KEYS: the type, the allowed values (as docs/config.md states
 * them), an example, and for integers the range.
 * @typedef {{name: string, type: "string" | "integer" | "list of codes" | "table",
 *   allowed: string, example: string, low?: number, high?: number}} Key
 */
/** @param {string} name @param {number} low @param {number} high @param {string} example @param {string} [unit] @returns {Key} */
const intKey = (name, low, high, example, unit = "") => ({
  name,
  type: "integer",
  allowed: `${grouped(low)} to ${grouped(high)}${unit}`,
  example,
  low,
  high,
});
/** @type {Key[]} */
export const KEYS = [
  {
    name: "workflow",
    type: "string",
    allowed:
      "a built-in workflow name (`apex`, `generic`, ...) or the path of a workflow YAML file, relative to the configuration file's directory and inside the repository",
    example: "generic",
  },
  {
    name: "session_root",
    type: "string",
    allowed: "a relative path inside the repository (no `..`, not absolute, no link leading out)",
    example: "agent-output",
  },
  intKey("max_size", 1, 1024 * 1024 * 1024, "16777216", " bytes"),
  intKey("clock_skew_seconds", 0, DAY, "600", " seconds"),
  intKey("stale_after_seconds", 1, 7 * DAY, "900", " seconds"),
  intKey("archive_keep", 1, 10_000, "10"),
  {
    name: "docs_url",
    type: "string",
    allowed:
      "an absolute http(s) URL of characters a URI may hold (no spaces, quotes, `<`, `>`, `{`, `}`)",
    example: "https://example.com/session-resume/docs/",
  },
  {
    name: "select",
    type: "list of codes",
    allowed: "codes (`SR301`), prefixes (`SR3`) or `ALL`",
    example: "[SR3, SR4]",
  },
  {
    name: "ignore",
    type: "list of codes",
    allowed: "codes (`SR330`) or prefixes (`SR41`)",
    example: "[SR330, SR415]",
  },
  {
    name: "per-file-ignores",
    type: "table",
    allowed:
      "a glob of state file paths (relative to the repository root, `*` within a directory, `**` across) mapped to a list of codes or prefixes",
    example: '{"agent-output/legacy-*/*": [SR330]}',
  },
];
const BY_NAME = new Map(KEYS.map((k) => [k.name, k]));
export const CODE_SELECTOR = /^(?:SR[0-9]{0,3}|ALL)$/;

/**
 * A project's configuration: the defaults where the file sets nothing.
 * @typedef {{root: string, source: string | null, workflow: string | null,
 *   session_root: string, max_size: number, clock_skew_seconds: number,
 *   stale_after_seconds: number, archive_keep: number, docs_url: string | null,
 *   select: string[] | null, ignore: string[], per_file_ignores: [string, string[]][]}} Config
 */

/** @param {string} root @returns {Config} */
export const defaults = (root) => ({
  root,
  source: null,
  workflow: null,
  session_root: "agent-output",
  max_size: DEFAULT_MAX_SIZE,
  clock_skew_seconds: 300,
  stale_after_seconds: 300,
  archive_keep: 5,
  docs_url: null,
  select: null,
  ignore: [],
  per_file_ignores: [],
});

// --- paths as Python's os.path and pathlib see them -------------------------------------

/** os.path.realpath: links resolved as far as they lead (a dangling one to its target).
 * @param {string} p @returns {string} */
export function pyRealpath(p, depth = 0) {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    // resolved below
  }
  const parent = dirname(abs);
  const head = parent === abs ? abs : pyRealpath(parent, depth + 1);
  const name = basename(abs);
  const here = name ? join(head, name) : head;
  if (depth < 40) {
    try {
      if (lstatSync(here).isSymbolicLink())
        return pyRealpath(resolve(head, readlinkSync(here)), depth + 1);
    } catch {
      // not there: as it is
    }
  }
  return here;
}

/** The real path of `p`, or its absolute form when it does not exist. @param {string} p */
export function realOrAbsolute(p) {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** pathlib's `base / rel`: empty and `.` parts dropped, `..` kept. @param {string} base @param {string} rel */
function pathJoin(base, rel) {
  const parts = rel.split("/").filter((x) => x !== "" && x !== ".");
  return [base.replace(/\/+$/, "") || "/", ...parts].join("/").replace(/^\/\//, "/");
}

/** Whether `path` exists as anything (a dangling link too). @param {string} path */
function present(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

// --- reading the file --------------------------------------------------------------------

/** @param {string} code @param {string} message @param {string} path @param {string} [hint] @param {number | null} [line] */
function configError(code, message, path, hint = "", line = null) {
  return new ConfigError({
    code,
    message,
    file: path,
    line,
    column: null,
    hint: hint || `Fix the file; every key is described in ${CONFIG_DOC}.`,
  });
}

/** @param {unknown} err @param {string} path */
const cannotRead = (err, path) =>
  configError("SR405", `cannot read the file: ${strerror(err)}`, path);

/** The bytes of a configuration file in directory `d` (the reference's `read_config_bytes`):
 * a regular file, or a link whose target is inside `d`, of at most MAX_CONFIG_BYTES;
 * anything else refused before a byte is read. @param {string} path @param {string} d */
export function readConfigBytes(path, d) {
  let lst;
  try {
    lst = lstatSync(path);
  } catch (err) {
    throw cannotRead(err, path);
  }
  let target = path;
  if (lst.isSymbolicLink()) {
    target = pyRealpath(path);
    if (!isWithin(target, pyRealpath(d)))
      throw configError(
        "SR105",
        "the file is a symbolic link leading outside its directory; not followed",
        path,
        "Replace the link with the file itself.",
      );
  }
  let fd;
  try {
    fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw cannotRead(err, path);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw configError(
        "SR405",
        "the file is not a regular file (a directory, FIFO or device); not read",
        path,
        "Replace it with a regular file, or remove it.",
      );
    if (st.size > MAX_CONFIG_BYTES)
      throw configError(
        "SR405",
        `the file is ${grouped(st.size)} bytes; a configuration file may have ${grouped(MAX_CONFIG_BYTES)}; not read`,
        path,
        "Shorten the file.",
      );
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > MAX_CONFIG_BYTES)
      throw configError(
        "SR405",
        `the file grew past ${grouped(MAX_CONFIG_BYTES)} bytes while read`,
        path,
      );
    return buf.subarray(0, n);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw cannotRead(err, path);
  } finally {
    closeSync(fd);
  }
}

/** Python's UnicodeDecodeError reason for the first bad sequence of `b` (none: null).
 * @param {Uint8Array} b */
function utf8Problem(b) {
  const i = firstInvalidUtf8(b);
  if (i < 0) return null;
  const c = b[i];
  if (c < 0xc2 || c > 0xf4) return "invalid start byte";
  const need = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  const [lo, hi] =
    c === 0xe0
      ? [0xa0, 0xbf]
      : c === 0xed
        ? [0x80, 0x9f]
        : c === 0xf0
          ? [0x90, 0xbf]
          : c === 0xf4
            ? [0x80, 0x8f]
            : [0x80, 0xbf];
  for (let k = 1; k < need; k++) {
    if (i + k >= b.length) return "unexpected end of data";
    const x = b[i + k];
    if (k === 1 ? x < lo || x > hi : x < 0x80 || x > 0xbf) return "invalid continuation byte";
  }
  return "invalid continuation byte";
}

/** @param {Uint8Array} b */
const decodeUtf8 = (b) => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(b);

// A line that could start our table (the reference's `_MAY_CONFIGURE_US`, on the raw bytes).
const MAY_CONFIGURE_US =
  /(?:^|(?<=\n))[ \t]*(?:\[[ \t]*)?["']?tool["']?[ \t]*(?:\]|=|\.[ \t]*["']?session-resume)/;
const TOML_SPECIAL = /["'#[\]{}]/g;
const TOML_STRING =
  /"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""|'''[\s\S]*?'''|"(?:[^"\\\n]|\\[\s\S])*"|'[^'\n]*'/y;

/** The deepest nesting of arrays and inline tables (the reference's `toml_depth`), stopping
 * past MAX_TOML_DEPTH. @param {string} text */
export function tomlDepth(text) {
  let pos = 0;
  let depth = 0;
  let deepest = 0;
  while (deepest <= MAX_TOML_DEPTH) {
    TOML_SPECIAL.lastIndex = pos;
    const m = TOML_SPECIAL.exec(text);
    if (m === null) break;
    const c = m[0];
    const at = m.index;
    if (c === "[" || c === "{") {
      depth += 1;
      deepest = Math.max(deepest, depth);
    } else if (c === "]" || c === "}") depth = Math.max(depth - 1, 0);
    else if (c === "#") {
      const end = text.indexOf("\n", at);
      pos = end < 0 ? text.length : end;
      continue;
    } else {
      TOML_STRING.lastIndex = at;
      const s = TOML_STRING.exec(text);
      if (s === null) break;
      pos = at + s[0].length;
      continue;
    }
    pos = at + 1;
  }
  return deepest;
}

/** A TOML table (not an array, a date or a scalar). @param {unknown} v @returns {v is Record<string, unknown>} */
const isTable = (v) =>
  v !== null &&
  typeof v === "object" &&
  !Array.isArray(v) &&
  (Object.getPrototypeOf(v) === null || Object.getPrototypeOf(v) === Object.prototype);

/** A pyproject.toml parsed (the reference's `_read_pyproject`): [document or null when it is
 * not TOML, its text]; `{}` when no line could start our table.
 * @param {string} path @param {string} d @returns {[Record<string, unknown> | null, string]} */
function readPyproject(path, d) {
  const data = readConfigBytes(path, d);
  if (!MAY_CONFIGURE_US.test(data.toString("latin1"))) return [{}, ""];
  let text;
  try {
    text = decodeUtf8(data);
  } catch {
    return [null, ""];
  }
  if (tomlDepth(text) > MAX_TOML_DEPTH)
    throw new ConfigError({
      code: "SR405",
      message: `the file nests arrays or inline tables deeper than ${MAX_TOML_DEPTH} levels; refused before it is parsed`,
      file: path,
      line: null,
      column: null,
      hint: "Nest less deeply: a real pyproject.toml needs under 10 levels.",
    });
  let doc;
  try {
    doc = parseToml(text, { integersAsBigInt: true });
  } catch {
    return [null, text];
  }
  return [/** @type {Record<string, unknown>} */ (floatsMarked(doc)), text];
}

/** A TOML document with its floats as YamlFloat (its integers are BigInt): the configuration's
 * integers are Python's `int`, never a float (nesting is bounded by tomlDepth).
 * @param {unknown} v @returns {unknown} */
function floatsMarked(v) {
  if (typeof v === "number") return new YamlFloat(v);
  if (Array.isArray(v)) return v.map(floatsMarked);
  if (isTable(v)) for (const k of Object.keys(v)) v[k] = floatsMarked(v[k]);
  return v;
}

/**
 * (root, configuration file or null, kind, and for a pyproject.toml its table and text),
 * searching upwards from `start` (the reference's `find_root`); throws ConfigError.
 * @param {string} start
 * @returns {{root: string, path: string | null, kind: "yaml" | "toml" | "", table: [unknown, string] | null}}
 */
export function findConfig(start) {
  const first = realOrAbsolute(start);
  for (let d = first; ; d = dirname(d)) {
    if (present(join(d, CONFIG_FILE)))
      return { root: d, path: join(d, CONFIG_FILE), kind: "yaml", table: null };
    const py = join(d, "pyproject.toml");
    if (present(py)) {
      const [doc, text] = readPyproject(py, d);
      const tool = doc?.tool;
      if (isTable(tool) && "session-resume" in tool)
        return { root: d, path: py, kind: "toml", table: [tool["session-resume"], text] };
    }
    if (present(join(d, ".git"))) return { root: d, path: null, kind: "", table: null };
    if (dirname(d) === d) return { root: first, path: null, kind: "", table: null };
  }
}

/** The repository root of directory `start`. @param {string} start @returns {string} */
export function findRoot(start) {
  return findConfig(start).root;
}

/** The nearest existing directory of `path`. @param {string} path */
function existingDir(path) {
  let d = resolve(path);
  for (;;) {
    try {
      if (statSync(d).isDirectory()) return d;
    } catch {
      // not there: its parent
    }
    if (dirname(d) === d) return d;
    d = dirname(d);
  }
}

/** The root of the repository `path` is in: found from its nearest existing directory
 * upwards (docs/config.md: the session's repository, not the current directory's).
 * @param {string} path */
export function rootNear(path) {
  return findRoot(existingDir(path));
}

/** The configuration of the repository `path` is in (from its nearest existing directory
 * upwards), or of `--root`, or of the current directory (the reference's `config_near`).
 * @param {string | null | undefined} path @param {string | undefined} rootArg */
export function configNear(path, rootArg) {
  if (rootArg || path === null || path === undefined) return loadConfig(rootArg || process.cwd());
  return loadConfig(existingDir(path));
}

// --- checking the values -----------------------------------------------------------------

/** `s` as a regular expression matching it literally. */
export const reEscape = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The line (1-based) where `key` is set in the configuration text (the reference's
 * `key_line`). @param {string} text @param {string} kind @param {string} key */
export function keyLine(text, kind, key) {
  const k = reEscape(key);
  const quoted = `(?:${k}|"${k}"|'${k}')`;
  let at = -1;
  if (kind === "yaml") {
    const m = new RegExp(`(?:^|(?<=\\n))${quoted}[ \\t]*:`).exec(text);
    at = m ? m.index : -1;
  } else {
    const header =
      /(?:^|(?<=\n))[ \t]*\[[ \t]*["']?tool["']?[ \t]*\.[ \t]*["']?session-resume["']?[ \t]*\]/.exec(
        text,
      );
    const start = header ? header.index + header[0].length : 0;
    const re = new RegExp(`(?:(?:^|(?<=\\n))[ \\t]*|[{,.][ \\t]*)${quoted}[ \\t]*=`, "g");
    re.lastIndex = start;
    const m = re.exec(text);
    at = m ? m.index : -1;
  }
  return at < 0 ? null : text.slice(0, at).split("\n").length;
}

/** Python's repr() of a configuration value. @param {unknown} v @returns {string} */
function repr(v) {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (v instanceof YamlFloat) return floatRepr(v.value);
  if (typeof v === "bigint") return String(v);
  if (typeof v === "string") return strRepr(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : floatRepr(v);
  if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`;
  if (typeof v === "object" && isTable(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${strRepr(k)}: ${repr(x)}`)
      .join(", ")}}`;
  return String(v);
}

/** @param {unknown} v */
const show = (v) => {
  const text = repr(v);
  return text.length <= 60 ? text : `${text.slice(0, 57)}...`;
};

/** @param {unknown} value */
function badCodes(value) {
  if (!Array.isArray(value) || !value.every((c) => typeof c === "string")) return "a list of codes";
  const bad = value.filter((c) => !CODE_SELECTOR.test(c));
  return bad.length ? `codes or prefixes like SR3 or SR301, not ${show(bad[0])}` : null;
}

/** An integer as the file wrote it (not a float, not a boolean), or null. @param {unknown} v */
function integer(v) {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" && Number.isInteger(v)) return v;
  return null;
}

/** Why `value` is not allowed for `key` (null: it is). @param {Key} key @param {unknown} value */
function checkValue(key, value) {
  if (key.type === "list of codes") {
    const problem = badCodes(value);
    return problem ? `${key.name} must be ${problem}` : null;
  }
  if (key.type === "table") {
    if (!isTable(value)) return `${key.name} must be a table of globs to lists of codes`;
    for (const [glob, codes] of Object.entries(value)) {
      const problem = badCodes(codes);
      if (!glob || problem)
        return `${key.name}: ${show(glob)} must map to ${problem ?? "a list of codes"}`;
    }
    return null;
  }
  if (key.type === "integer") {
    const n = integer(value);
    if (n === null) return `${key.name} must be an integer (${key.allowed}), not ${show(value)}`;
    if (
      typeof value === "bigint"
        ? value < BigInt(/** @type {number} */ (key.low)) ||
          value > BigInt(/** @type {number} */ (key.high))
        : n < /** @type {number} */ (key.low) || n > /** @type {number} */ (key.high)
    )
      return `${key.name} must be ${key.allowed}; ${show(value)} is out of range`;
    return null;
  }
  if (typeof value !== "string") return `${key.name} must be a string, not ${show(value)}`;
  if (key.name === "session_root") {
    const parts = value.replaceAll("\\", "/").split("/");
    if (!value || isAbsolute(value) || /^[/\\]/.test(value) || parts.includes(".."))
      return `session_root must be a relative path inside the repository, not ${show(value)}`;
    if (value.includes("\0")) return "session_root must not hold a NUL character";
  }
  if (key.name === "docs_url" && !absoluteUrl(value))
    return `docs_url must be an absolute http(s) URL of characters a URI may hold, not ${show(value)}`;
  if (key.name === "workflow" && (!value || value.includes("\0")))
    return `workflow must be a workflow name or file, not ${show(value)}`;
  return null;
}

const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;

/** An absolute http(s) URL with a host, of characters a URI may hold (the reference's
 * `absolute_url`). @param {string} value */
export function absoluteUrl(value) {
  if (!URI_CHARS.test(value) || /%(?![0-9A-Fa-f]{2})/.test(value)) return false;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(value);
  return m !== null && ["http", "https"].includes(m[1].toLowerCase()) && m[2] !== "";
}

/** A built-in name as it is; anything else a file relative to the configuration file's
 * directory that must exist inside the repository (the reference's `_resolve_workflow`).
 * @param {string} value @param {string} path @param {string} root @param {number | null} line */
function resolveWorkflow(value, path, root, line) {
  const names = builtins();
  if (names.includes(value)) return value;
  const target = pathJoin(dirname(path), value);
  if (isAbsolute(value) || !isWithin(pyRealpath(target), pyRealpath(root)))
    throw configError(
      "SR105",
      "workflow: the configured workflow file leads outside the repository; refused",
      path,
      "Name a built-in workflow or a workflow file inside the repository.",
      line,
    );
  let file = false;
  try {
    file = statSync(target).isFile();
  } catch {
    file = false;
  }
  if (!file)
    throw configError(
      "SR405",
      `workflow: no built-in workflow named ${show(value)} and no file at that path (built-ins: ${names.join(", ")}; a file is relative to this file's directory)`,
      path,
      `Name one of the built-ins (${names.join(", ")}) or an existing workflow YAML file; see ${CONFIG_DOC}.`,
      line,
    );
  return target;
}

/** The configuration of the repository found from `start` upwards (the reference's
 * `load_config`); throws ConfigError. @param {string} [start] @returns {Config} */
export function loadConfig(start) {
  const { root, path, kind, table } = findConfig(start || process.cwd());
  if (path === null) return defaults(root);
  /** @type {unknown} */
  let raw;
  let text = "";
  if (kind === "yaml") {
    const data = readConfigBytes(path, root);
    const problem = utf8Problem(data);
    if (problem !== null) throw configError("SR405", `the file is not UTF-8: ${problem}`, path);
    text = decodeUtf8(data);
    try {
      raw = parseYaml(text, { floats: true });
    } catch (err) {
      if (!(err instanceof YamlError)) throw err;
      throw new ConfigError({
        code: "SR405",
        message: err.message,
        file: path,
        line: err.line,
        column: err.column,
        hint: `Write the file as a YAML mapping of the keys in ${CONFIG_DOC}.`,
      });
    }
    if (raw === null) raw = {};
  } else [raw, text] = /** @type {[unknown, string]} */ (table);
  if (!isTable(raw))
    throw configError(
      "SR405",
      "the configuration must be a mapping of keys to values",
      path,
      `Write \`key: value\` lines; the keys are in ${CONFIG_DOC}.`,
    );
  const cfg = defaults(root);
  cfg.source = path;
  /** @type {Record<string, any>} */
  const values = cfg;
  for (const [k, v] of Object.entries(raw)) {
    const written = keyAsWritten(raw, k); // `1:` is the key 1, which no line names as "1"
    const key = typeof written === "string" ? BY_NAME.get(k) : undefined;
    const line = typeof written === "string" ? keyLine(text, kind, k) : null;
    if (key === undefined)
      throw configError(
        "SR405",
        `unknown key ${show(written)} (known: ${KEYS.map((x) => x.name).join(", ")})`,
        path,
        `Remove the key or correct its name; the keys are in ${CONFIG_DOC}.`,
        line,
      );
    const problem = checkValue(key, v);
    if (problem !== null)
      throw configError(
        "SR405",
        problem,
        path,
        `Set ${key.name} to ${key.allowed} (e.g. \`${key.name}: ${key.example}\`); see ${CONFIG_DOC}.`,
        line,
      );
    const field = key.name.replaceAll("-", "_");
    if (key.type === "integer") values[field] = integer(v);
    else if (key.type === "table")
      values[field] = Object.entries(/** @type {Record<string, string[]>} */ (v)).map(([g, c]) => [
        g,
        [...c],
      ]);
    else values[field] = v;
  }
  if (cfg.workflow !== null)
    cfg.workflow = resolveWorkflow(cfg.workflow, path, root, keyLine(text, kind, "workflow"));
  return cfg;
}

/** The session root under `root` (default: the configuration's), refused (SR105) when a
 * link leads it outside the repository. @param {Config} cfg @param {string} [root] */
export function sessionRootDir(cfg, root = cfg.root) {
  const path = join(root, cfg.session_root);
  if (!isWithin(pyRealpath(path), pyRealpath(root)))
    throw new ConfigError({
      code: "SR105",
      message: `the configured session_root ${strRepr(cfg.session_root)} leads outside the repository; refused`,
      file: cfg.source ?? cfg.root,
      line: null,
      column: null,
      hint: `Make session_root a directory inside the repository (${CONFIG_DOC}).`,
    });
  return path;
}

/**
 * Which workflow reads a state whose `workflow` field is `own` (the reference's
 * `state_workflow_spec`): a built-in by its name, or the project's configured workflow by its
 * id, never a path; null when it names neither (the caller reports SR403).
 * @param {unknown} own @param {string | null} configured
 */
export function stateWorkflowSpec(own, configured) {
  if (own === undefined || own === null) return configured ?? "apex";
  if (typeof own === "string" && builtins().includes(own)) return own;
  if (typeof own === "string" && configured) {
    try {
      if (loadWorkflow(configured).id === own) return configured;
    } catch (err) {
      if (!(err instanceof WorkflowError)) throw err;
    }
  }
  return null;
}

/** The reference's words for a state whose workflow field names neither a built-in nor the
 * configured workflow (SR403). @param {unknown} own */
export function stateWorkflowRefusal(own) {
  const text = typeof own === "string" ? own : repr(own);
  return (
    `the state names workflow ${strRepr([...text].slice(0, 80).join(""))}, which is neither built in ` +
    `(${builtins().join(", ")}) nor the project's configured workflow; a state's workflow field ` +
    "is never read as a path"
  );
}
