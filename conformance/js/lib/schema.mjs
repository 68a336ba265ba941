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
    ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
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
