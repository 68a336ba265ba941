// The registry of state schema versions (spec §2.2): the one place that names them. Adding a
// version is a schema file (schema/session-state/<v>.json), one line here and its migration
// step in migrate.mjs (STEPS, keyed by the version it produces); the last line is current.
// Version strings are "MAJOR.MINOR", compared as numbers; a missing schema_version means 1.0.

/** @type {readonly string[]} */
export const KNOWN = Object.freeze(["1.0", "2.0", "3.0"]);
export const CURRENT = KNOWN[KNOWN.length - 1];
export const OLDEST = KNOWN[0];

const VERSION = /^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$/;

/** @param {string} raw @returns {[number, number] | null} */
export function parseVersion(raw) {
  const m = VERSION.exec(raw);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

const CURRENT_NUM = /** @type {[number, number]} */ (parseVersion(CURRENT));

/** The schema file of a version, relative to the schema directory. @param {string} version */
export const schemaOf = (version) => `session-state/${version}.json`;

/**
 * The version of a parsed document: {raw, num}, or {invalid: true}.
 * @param {Record<string, unknown>} doc
 * @returns {{raw: string, num: [number, number], invalid?: undefined} | {invalid: true, raw?: undefined, num?: undefined}}
 */
export function versionOf(doc) {
  if (!("schema_version" in doc))
    return { raw: OLDEST, num: /** @type {[number, number]} */ (parseVersion(OLDEST)) };
  const raw = doc.schema_version;
  if (typeof raw !== "string") return { invalid: true };
  const num = parseVersion(raw);
  return num ? { raw, num } : { invalid: true };
}

/** @param {[number, number]} num */
export const newerThanKnown = ([a, b]) =>
  a > CURRENT_NUM[0] || (a === CURRENT_NUM[0] && b > CURRENT_NUM[1]);

/** @param {string} raw */
export const isKnown = (raw) => KNOWN.includes(raw);
