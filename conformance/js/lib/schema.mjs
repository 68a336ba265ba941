// JSON Schema checks with ajv against the protocol's own schema files, and the mapping of
// failing keywords to codes (spec §2.3).
//
// Where the schema files are: $SESSION_RESUME_SCHEMA_DIR if set; else the copy bundled into
// the package at pack time (`schema/` beside package.json, written by scripts/bundle-schema.mjs
// from the repository's top-level schema/ and removed again after packing); else, in a
// checkout, the repository's top-level schema/ itself (one source, no hand-kept copy).

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import { found, pointerJoin, pointerSplit, pyJson, pyRepr, strRepr } from "./findings.mjs";
import { keysOf } from "./jsonread.mjs";

// ajv is CommonJS: its class is the default import's `default` (or the import itself)
// ajv is CommonJS: its class is the default import's `default` (or the import itself)
const Ajv2020 = /** @type {typeof import("ajv/dist/2020.js").default} */ (
  Ajv2020Module.default ?? Ajv2020Module
);
const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The schema directory this package reads when none is set. */
export function defaultSchemaDir() {
  if (process.env.SESSION_RESUME_SCHEMA_DIR) return resolve(process.env.SESSION_RESUME_SCHEMA_DIR);
  const bundled = join(PACKAGE_DIR, "schema");
  if (existsSync(join(bundled, "session-state"))) return bundled;
  return resolve(PACKAGE_DIR, "..", "..", "schema");
}

/** @type {string | null} */
let schemaDir = null;
/** @typedef {import("ajv/dist/2020.js").default} Ajv */
/** @type {Ajv | null} */
let ajv = null;
/** @type {Ajv | null} */
let loose = null;
/** @type {Map<string, import("ajv").ValidateFunction>} */
const compiled = new Map();

/** Read the schemas (and built-in workflows) from `dir` from now on. @param {string} dir */
export function setSchemaDir(dir) {
  schemaDir = dir;
  compiled.clear();
  ajv = null;
}

/** @returns {string} */
export function getSchemaDir() {
  if (schemaDir === null) schemaDir = defaultSchemaDir();
  return schemaDir;
}

/** @returns {Ajv} */
function engine() {
  if (ajv === null) {
    // No schema of the protocol uses `format`; none is registered, and strict mode would
    // refuse a schema that started to use one without this code being updated.
    // verbose: each error carries its schema and value, which the findings' words quote
    ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, verbose: true });
    // Editor annotations of the schemas (spec §2.3): known to strict mode, never assertions.
    ajv.addVocabulary([
      "markdownDescription",
      "enumDescriptions",
      "markdownEnumDescriptions",
      "defaultSnippets",
    ]);
  }
  return ajv;
}

/** A compiled validator of schema/<rel> (e.g. "session-state/3.0.json"). @param {string} rel */
export function validator(rel) {
  let v = compiled.get(rel);
  if (!v) {
    const schema = JSON.parse(readFileSync(join(getSchemaDir(), rel), "utf8"));
    v = engine().compile(schema);
    compiled.set(rel, v);
  }
  return v;
}

/** Compile an in-memory schema (a workflow's state fragment); not strict, field schemas are free.
 * @param {object} schema */
export function compileFragment(schema) {
  if (loose === null) {
    // Like the reference (jsonschema without a format checker), `format` is an annotation here.
    loose = new Ajv2020({
      strict: false,
      allErrors: true,
      allowUnionTypes: true,
      validateFormats: false,
      logger: false,
      verbose: true,
    });
  }
  return loose.compile(schema);
}

/** @type {Record<string, string>} */
const KEYWORD_CODES = {
  required: "SR201",
  type: "SR202",
  enum: "SR203",
  const: "SR203",
  pattern: "SR204",
  format: "SR204",
  additionalProperties: "SR205",
  unevaluatedProperties: "SR205",
  propertyNames: "SR207",
  uniqueItems: "SR206",
  minItems: "SR206",
  maxItems: "SR206",
  contains: "SR206",
  minContains: "SR206",
  maxContains: "SR206",
  minimum: "SR208",
  maximum: "SR208",
  exclusiveMinimum: "SR208",
  exclusiveMaximum: "SR208",
  minLength: "SR208",
  maxLength: "SR208",
  multipleOf: "SR208",
  minProperties: "SR208",
  maxProperties: "SR208",
};
// ajv reports these wrappers in addition to the errors inside them; they add no finding.
const WRAPPERS = new Set(["if", "then", "else", "allOf", "$ref"]);

/**
 * Codes for ajv errors; the step status enum is SR309, not SR203 (spec §2.3). `override`: the
 * one code of every error (a workflow definition's SR400).
 * @param {import("ajv").ErrorObject[] | null | undefined} errors
 * @param {{override?: string | null}} [opts]
 * @returns {string[]}
 */
export function codesFor(errors, { override = null } = {}) {
  /** @type {string[]} */
  const out = [];
  for (const e of errors ?? []) {
    if (WRAPPERS.has(e.keyword)) continue;
    if (override) {
      out.push(override);
      continue;
    }
    let code = KEYWORD_CODES[e.keyword] ?? "SR209";
    if (e.propertyName !== undefined || e.schemaPath.includes("/propertyNames")) code = "SR207";
    if (e.keyword === "enum" && /^\/steps\/[^/]+\/status$/.test(e.instancePath)) code = "SR309";
    out.push(code);
  }
  return out;
}

/** Validate `instance` against schema/<rel>; returns the codes (empty when valid).
 * @param {string} rel @param {unknown} instance @param {{override?: string | null}} [opts] */
export function check(rel, instance, opts = {}) {
  const v = validator(rel);
  if (v(instance)) return [];
  return codesFor(v.errors, opts);
}

// --- the findings' words: the reference's core/schemas.py `explain` ------------------------

/** Schema errors explained per document (the reference's MAX_EXPLAINED). */
export const MAX_EXPLAINED = 1000;

/** A step status that means another one (the spelling of another tool). */
const STATUS_MEANT = /** @type {Record<string, string>} */ ({
  done: "complete",
  completed: "complete",
  finished: "complete",
  success: "complete",
  active: "in_progress",
  running: "in_progress",
  started: "in_progress",
  "in-progress": "in_progress",
  todo: "pending",
  not_started: "pending",
  skip: "skipped",
  cancelled: "skipped",
});
const STATUSES = new Set(["pending", "in_progress", "complete", "skipped"]);

/** Up to `n` code points of `s`, else its first n - 3 and "...". @param {string} s @param {number} n */
function cut(s, n) {
  const cps = [...s];
  return cps.length <= n ? s : `${cps.slice(0, n - 3).join("")}...`;
}

/** A value as the reference shows it: its JSON, at most 60 characters. @param {unknown} v */
const show = (v) => cut(pyJson(v), 60);

/** Python's str.strip().lower() of a status value. @param {unknown} v */
const lowered = (v) => (typeof v === "string" ? v.trim().toLowerCase() : "");

/**
 * The engine's own message for a keyword (the words of jsonschema, the reference's engine,
 * for the keywords the protocol's schemas use; ajv's for any other).
 * @param {import("ajv").ErrorObject} e @param {unknown} instance
 */
function engineMessage(e, instance) {
  const want = e.schema;
  const r = pyRepr(instance);
  switch (e.keyword) {
    case "pattern":
      return `${r} does not match ${strRepr(String(want))}`;
    case "minLength":
    case "minItems":
      return `${r} ${want === 1 ? "should be non-empty" : "is too short"}`;
    case "maxLength":
    case "maxItems":
      return `${r} ${want === 0 ? "is expected to be empty" : "is too long"}`;
    case "minimum":
      return `${r} is less than the minimum of ${pyRepr(want)}`;
    case "maximum":
      return `${r} is greater than the maximum of ${pyRepr(want)}`;
    case "exclusiveMinimum":
      return `${r} is less than or equal to the minimum of ${pyRepr(want)}`;
    case "exclusiveMaximum":
      return `${r} is greater than or equal to the maximum of ${pyRepr(want)}`;
    case "uniqueItems":
      return `${r} has non-unique elements`;
    case "multipleOf":
      return `${r} is not a multiple of ${want}`;
    case "anyOf":
      return `${r} is not valid under any of the given schemas`;
    default:
      return `${e.message ?? "is not valid"}`;
  }
}

/** The hint written for this error (the reference's `_hint`): for a step status what the
 * value most likely meant, else the failing field's own description from the schema; empty
 * (the catalogue's fix) when there is none.
 * @param {string} code @param {string[]} path @param {import("ajv").ErrorObject} e */
function hintOf(code, path, e) {
  if (path.length === 3 && path[0] === "steps" && path[2] === "status") {
    const value = typeof e.data === "string" ? e.data : "";
    const lower = lowered(value);
    const meant = STATUSES.has(lower) ? lower : STATUS_MEANT[lower];
    if (meant)
      return (
        `The status for that is \`${meant}\` (lower case): correct the value in the ` +
        "file; the write commands keep it right from then on."
      );
    if (["blocked", "waiting", "on_hold", "paused"].includes(lower))
      return (
        "Keep the step in_progress and record the blocker with " +
        "`session-resume finding add TITLE`."
      );
    return "";
  }
  if (["SR201", "SR205", "SR206", "SR207"].includes(code)) return "";
  const schema = /** @type {any} */ (e.parentSchema);
  const text = schema && typeof schema === "object" ? schema.description : undefined;
  if (typeof text !== "string" || !text) return "";
  const title = schema.title;
  const first = cut(text, 240);
  return typeof title === "string" && title ? `${title}: ${first}` : first;
}

/** Python's list comparison of two paths' parts as strings, then of the keywords.
 * @param {[string[], string]} a @param {[string[], string]} b */
function bySortKey(a, b) {
  const [p, q] = [a[0], b[0]];
  for (let i = 0; i < Math.min(p.length, q.length); i++) {
    if (p[i] !== q[i]) return p[i] < q[i] ? -1 : 1;
  }
  if (p.length !== q.length) return p.length - q.length;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}

/**
 * The findings of ajv's errors in the reference's words, order and places: sorted by the
 * failing value's path, then keyword; one per missing property, per property not allowed,
 * per key not allowed; the same (code, pointer, message) once. `override`: the one code of
 * every finding (a workflow's state fragment: SR420); `prefix` starts every message (an old
 * version's schema).
 * @param {import("ajv").ErrorObject[] | null | undefined} errors
 * @param {{override?: string | null, prefix?: string}} [opts]
 * @returns {import("./types.js").Found[]}
 */
export function explainErrors(errors, { override = null, prefix = "" } = {}) {
  const all = errors ?? [];
  // an anyOf the value matches none of is one finding, as the reference's engine reports it
  const alternatives = all.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
  const inside = (/** @type {import("ajv").ErrorObject} */ e) =>
    alternatives.some((a) => a !== e && e.schemaPath.startsWith(`${a.schemaPath}/`));
  let kept = all.filter(
    (e) =>
      !WRAPPERS.has(e.keyword) &&
      e.keyword !== "propertyNames" &&
      e.keyword !== "oneOf" &&
      !inside(e),
  );
  const more = kept.length > MAX_EXPLAINED;
  if (more) kept = kept.slice(0, MAX_EXPLAINED);
  // a property not allowed: in the order of the object's text (the reference's engine lists
  // them so; ajv, as JavaScript, lists integer-like keys first)
  const place = (/** @type {import("ajv").ErrorObject} */ e) => {
    const p = /** @type {Record<string, any>} */ (e.params);
    const k = p.additionalProperty ?? p.unevaluatedProperty;
    return k !== undefined && e.data && typeof e.data === "object" ? keysOf(e.data).indexOf(k) : 0;
  };
  const keyed = kept.map((e) => ({
    e,
    at: place(e),
    key: /** @type {[string[], string]} */ ([pointerSplit(e.instancePath), e.keyword]),
  }));
  keyed.sort((a, b) => bySortKey(a.key, b.key) || a.at - b.at);
  /** @type {import("./types.js").Found[]} */
  const out = [];
  const seen = new Set();
  for (const { e, key } of keyed) {
    const path = key[0];
    for (let [code, at, message] of describe(e, path)) {
      if (override) code = override;
      else if (e.keyword === "enum" && at.length === 3 && at[0] === "steps" && at[2] === "status")
        code = "SR309";
      const ptr = pointerJoin(at);
      const text = prefix + message;
      const id = JSON.stringify([code, ptr, text]);
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(found(code, text, ptr, hintOf(code, path, e)));
    }
  }
  if (more)
    out.push(
      found(
        "SR209",
        "more schema findings, not listed: the schema check stops after the first " +
          `${MAX_EXPLAINED.toLocaleString("en-US")} (a 0.9 MB state can break it 140,000 times)`,
        "",
        "fix the findings listed, then validate again to see the next",
      ),
    );
  return out;
}

/** The reference's `_describe`: [code, path, message] of one error.
 * @param {import("ajv").ErrorObject} e @param {string[]} path
 * @returns {[string, string[], string][]} */
function describe(e, path) {
  const kw = e.keyword;
  const code = KEYWORD_CODES[kw] ?? "SR209";
  const where = pointerJoin(path) || "the document";
  const params = /** @type {Record<string, any>} */ (e.params);
  if (e.propertyName !== undefined) {
    // a keyword inside propertyNames: the value is the key itself
    const key = e.propertyName;
    const short = cut(engineMessage(e, key), 200);
    return [["SR207", [...path, key], `${where}: key ${strRepr(key)} is not allowed (${short})`]];
  }
  if (kw === "required") {
    const name = String(params.missingProperty);
    return [[code, path, `${where}: required property ${strRepr(name)} is missing`]];
  }
  if (kw === "additionalProperties" || kw === "unevaluatedProperties") {
    const k = String(params.additionalProperty ?? params.unevaluatedProperty);
    const at = [...path, k];
    return [[code, at, `${pointerJoin(at)}: property ${strRepr(k)} is not allowed here`]];
  }
  if (kw === "enum" || kw === "const") {
    const allowed = kw === "enum" ? /** @type {unknown[]} */ (e.schema) : [e.schema];
    const msg = `${show(e.data)} is not allowed; expected one of ${allowed.map(show).join(", ")}`;
    return [[code, path, `${where}: ${msg}`]];
  }
  if (kw === "type") {
    const want = Array.isArray(e.schema) ? e.schema.join(" or ") : String(e.schema);
    return [[code, path, `${where}: expected ${want}, got ${show(e.data)}`]];
  }
  if (kw === "pattern") {
    const parent = /** @type {any} */ (e.parentSchema);
    const title = (parent && typeof parent.title === "string" && parent.title) || "the value";
    const msg = `${show(e.data)} does not have the form of ${title} (pattern ${e.schema})`;
    return [[code, path, `${where}: ${msg}`]];
  }
  return [[code, path, `${where}: ${cut(engineMessage(e, e.data), 200)}`]];
}

/** Validate `instance` against schema/<rel>; its findings in the reference's words (empty
 * when valid). @param {string} rel @param {unknown} instance
 * @param {{override?: string | null, prefix?: string}} [opts] */
export function explain(rel, instance, opts = {}) {
  const v = validator(rel);
  if (v(instance)) return [];
  return explainErrors(v.errors, opts);
}
