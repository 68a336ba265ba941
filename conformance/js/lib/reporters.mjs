// The output formats of `validate`, as the reference writes them (validator/session_resume/
// reporters/): text (compiler style, every value escaped), json, github (workflow commands)
// and sarif (SARIF 2.1.0 for code scanning). A report is [{path, valid, schema_version,
// workflow, diagnostics}], a diagnostic {code, severity, message, file, pointer, line, column,
// hint}.

import { createHash } from "node:crypto";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { CODES, VERSION } from "./codes.mjs";

/**
 * @typedef {{code: string, severity: string, message: string, file: string, pointer: string,
 *   line: number | null, column: number | null, hint: string}} Diagnostic
 * @typedef {{path: string, valid: boolean, schema_version: string | null,
 *   workflow: string | null, diagnostics: Diagnostic[]}} FileReport
 */

export const FORMATS = ["text", "json", "github", "sarif"];

// --- text ----------------------------------------------------------------------------------

// C0 (with newline and ESC), DEL, C1, the line/paragraph separators and the bidi controls.
const CONTROL = /[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const LINE_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** @param {string} c */
const escapeChar = (c) => {
  const n = c.charCodeAt(0);
  return n < 0x100
    ? `\\x${n.toString(16).padStart(2, "0")}`
    : `\\u${n.toString(16).padStart(4, "0")}`;
};

/** One printable line: no value from a file may start a line or carry a terminal escape.
 * @param {string} text */
export function clean(text) {
  return text.replace(CONTROL, escapeChar).replace(LONE_SURROGATE, escapeChar);
}

/** Lines: control characters but newline and tab escaped, and no line starting (after blanks)
 * with `:`, so output never forges a GitHub workflow command. @param {string} text */
export function cleanLines(text) {
  return text
    .replace(LINE_CONTROL, escapeChar)
    .replace(LONE_SURROGATE, escapeChar)
    .replace(/^(\s*):/gm, "$1\\x3a");
}

/** @param {Diagnostic} d */
function location(d) {
  let loc = d.file ? clean(d.file) : "<input>";
  if (d.line !== null) {
    loc += `:${d.line}`;
    if (d.column !== null) loc += `:${d.column}`;
  }
  return loc;
}

/** @param {FileReport[]} reports */
function counts(reports) {
  const all = reports.flatMap((r) => r.diagnostics);
  const bad = reports.filter((r) => !r.valid).length;
  return {
    bad,
    errors: all.filter((d) => d.severity === "error").length,
    warnings: all.filter((d) => d.severity === "warning").length,
  };
}

/** @param {FileReport[]} reports */
export function renderText(reports) {
  /** @type {string[]} */
  const lines = [];
  for (const r of reports) {
    for (const d of r.diagnostics) {
      const ptr = d.pointer ? ` [${clean(d.pointer)}]` : "";
      lines.push(`${location(d)}: ${d.code} ${d.severity}: ${clean(d.message)}${ptr}`);
      if (d.hint) lines.push(`    hint: ${clean(d.hint)}`);
    }
  }
  const { bad, errors, warnings } = counts(reports);
  lines.push(
    `${reports.length} file(s) checked: ${reports.length - bad} valid, ${bad} invalid ` +
      `(${errors} error(s), ${warnings} warning(s)) - ${bad ? "invalid" : "valid"}`,
  );
  return cleanLines(`${lines.join("\n")}\n`);
}

// --- json ----------------------------------------------------------------------------------

/** @param {FileReport[]} reports @param {string | null} [error] */
export function reportJson(reports, error = null) {
  const { bad, errors, warnings } = counts(reports);
  /** @type {Record<string, unknown>} */
  const out = {
    report_version: 1,
    tool: "session-resume",
    valid: bad === 0 && error === null,
    summary: { files: reports.length, valid: reports.length - bad, invalid: bad, errors, warnings },
    files: reports,
  };
  if (error !== null) out.error = error;
  return out;
}

/** @param {FileReport[]} reports */
export function renderJson(reports) {
  return `${JSON.stringify(reportJson(reports), null, 2)}\n`;
}

// --- github --------------------------------------------------------------------------------

const GITHUB_LEVEL = /** @type {Record<string, string>} */ ({
  error: "error",
  warning: "warning",
  info: "notice",
});

/** @param {string} s */
const escapeData = (s) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
/** @param {string} s */
const escapeProp = (s) => escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

/** The path an annotation names: absolute, since the runner makes a path inside
 * GITHUB_WORKSPACE relative to it but reads any relative path from the repository root;
 * standard input's name stays as it is (the reference's `_annotated`).
 * @param {string} file */
const annotated = (file) => (!file || file === "<stdin>" ? file : resolve(file));

/** @param {FileReport[]} reports */
export function renderGithub(reports) {
  /** @type {string[]} */
  const lines = [];
  for (const r of reports) {
    for (const d of r.diagnostics) {
      const props = [`file=${escapeProp(annotated(d.file))}`];
      if (d.line !== null) props.push(`line=${d.line}`);
      if (d.column !== null) props.push(`col=${d.column}`);
      props.push(`title=${escapeProp(d.code)}`);
      let msg = d.message + (d.pointer ? ` (${d.pointer})` : "");
      if (d.hint) msg += `\nhint: ${d.hint}`;
      lines.push(`::${GITHUB_LEVEL[d.severity]} ${props.join(",")}::${escapeData(msg)}`);
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

// --- sarif ---------------------------------------------------------------------------------

export const DEFAULT_DOCS_URL = "https://github.com/session-resume/session-resume/blob/main/docs/";
export const SARIF_SCHEMA =
  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const SRCROOT = "%SRCROOT%";
const FINGERPRINT_KEY = "sessionResumeResult/v1";
const SARIF_LEVEL = /** @type {Record<string, string>} */ ({
  error: "error",
  warning: "warning",
  info: "note",
});

/** Percent-encoding as Python's `urllib.parse.quote(path, safe="/")`. @param {string} path */
function quote(path) {
  return encodeURIComponent(path.toWellFormed())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, "/");
}

/** @param {string} absolute */
const fileUri = (absolute) => `file://${quote(absolute)}`;

/** (artifactLocation, the path the fingerprint uses) @param {string} file @param {string} root
 * @returns {[{uri: string, uriBaseId?: string}, string]} */
function artifact(file, root) {
  const absolute = resolve(file);
  // the root itself is `.` under it, as pathlib's relative_to makes it
  const rel = relative(root, absolute) || ".";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    return [{ uri: fileUri(absolute) }, absolute];
  }
  return [{ uri: quote(rel), uriBaseId: SRCROOT }, rel];
}

/** @param {string} code @param {string} docs */
function rule(code, docs) {
  const c = CODES[code];
  const helpUri = `${docs}codes/${code}.md`;
  return {
    id: code,
    name: c.name,
    shortDescription: { text: c.summary },
    fullDescription: { text: c.fix ? `${c.summary} Fix: ${c.fix}` : c.summary },
    help: {
      text: c.fix || c.summary,
      markdown: `${c.summary}\n\n**Fix:** ${c.fix}\n\nSee [${code}](${helpUri}).`,
    },
    helpUri,
    defaultConfiguration: { level: SARIF_LEVEL[c.severity] },
    properties: { tags: ["session-resume"] },
  };
}

/** @param {Diagnostic} d @param {string} path @param {Map<string, number>} seen */
function fingerprint(d, path, seen) {
  const digest = createHash("sha256")
    .update([d.code, path, d.pointer].join("\0"))
    .digest("hex")
    .slice(0, 32);
  const n = (seen.get(digest) ?? 0) + 1;
  seen.set(digest, n);
  return `${digest}:${n}`;
}

/**
 * The SARIF log. `root`: where artifact locations are relative to (%SRCROOT%); `failure`: the
 * run was refused before checking (its invocation says so).
 * @param {FileReport[]} reports
 * @param {{root?: string | null, docsUrl?: string | null, failure?: string | null}} [opts]
 */
export function renderSarif(reports, { root = null, docsUrl = null, failure = null } = {}) {
  const base = resolve(root ?? process.cwd());
  let docs = docsUrl || DEFAULT_DOCS_URL;
  if (!docs.endsWith("/")) docs += "/";
  const used = [...new Set(reports.flatMap((r) => r.diagnostics.map((d) => d.code)))].sort();
  const seen = new Map();
  const results = reports.flatMap((r) =>
    r.diagnostics.map((d) => {
      const [location, fpPath] = artifact(d.file || r.path, base);
      /** @type {Record<string, number>} */
      const region = { startLine: d.line ?? 1 };
      if (d.line !== null && d.column !== null) region.startColumn = d.column;
      /** @type {Record<string, unknown>} */
      const res = {
        ruleId: d.code,
        ruleIndex: used.indexOf(d.code),
        level: SARIF_LEVEL[d.severity],
        message: { text: d.message + (d.hint ? ` Hint: ${d.hint}` : "") },
        locations: [{ physicalLocation: { artifactLocation: location, region } }],
        partialFingerprints: { [FINGERPRINT_KEY]: fingerprint(d, fpPath, seen) },
      };
      if (d.pointer) res.properties = { jsonPointer: d.pointer };
      return res;
    }),
  );
  /** @type {Record<string, unknown>} */
  const run = {
    tool: {
      driver: {
        name: "session-resume",
        version: VERSION,
        semanticVersion: VERSION,
        informationUri: `${docs}spec.md`,
        rules: used.map((c) => rule(c, docs)),
      },
    },
    originalUriBaseIds: { [SRCROOT]: { uri: `${fileUri(base).replace(/\/+$/, "")}/` } },
    columnKind: "unicodeCodePoints",
    results,
  };
  if (failure !== null) {
    run.invocations = [
      {
        executionSuccessful: false,
        exitCode: 2,
        toolExecutionNotifications: [{ level: "error", message: { text: failure } }],
      },
    ];
  }
  return `${JSON.stringify({ $schema: SARIF_SCHEMA, version: "2.1.0", runs: [run] }, null, 2)}\n`;
}
