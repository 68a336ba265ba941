// What every migration step shares (docs/spec.md §9): the context (clock, workflow, salvage,
// the coded notes and the x-legacy aside) and the error. Mirrors Python's
// core/migration/context.py.

/**
 * @typedef {import("../types.js").Json} Json
 * @typedef {import("../types.js").JsonObject} JsonObject
 */
/** @typedef {import("../types.js").Diagnostic} Diagnostic */

import { keysOf, setKeyOrder } from "../jsonread.mjs";

export const LEGACY = "x-legacy";

/** @param {unknown} v @returns {v is JsonObject} */
export const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @template T @param {T} v @returns {T} */
export const clone = (v) => {
  if (v === undefined) return v;
  const out = structuredClone(v);
  // the copy keeps each object's key order as read (keysOf), so the notes follow the text's
  // order as the reference's do
  /** @type {[unknown, unknown][]} */
  const stack = [[v, out]];
  while (stack.length) {
    const [a, b] = /** @type {[any, any]} */ (stack.pop());
    if (Array.isArray(a)) for (let i = 0; i < a.length; i++) stack.push([a[i], b[i]]);
    else if (isObject(a)) {
      const keys = keysOf(a);
      setKeyOrder(b, keys);
      for (const k of keys) stack.push([a[k], b[k]]);
    }
  }
  return out;
};
/** @param {object} o @param {PropertyKey} k */
export const has = (o, k) => Object.hasOwn(o, k);

/** Equal JSON values (key order aside). @param {Json} a @param {Json} b @returns {boolean} */
export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => has(b, k) && deepEqual(a[k], b[k]));
}

/** Equal values with the same key order (a renamed or reordered key is a change).
 * @param {JsonObject} a @param {JsonObject} b */
export const sameShape = (a, b) =>
  deepEqual(a, b) && Object.keys(a).join("\0") === Object.keys(b).join("\0");

/** A migration was refused; `diagnostics` ({code, message, pointer}) say why. */
export class MigrationError extends Error {
  /** @param {Diagnostic[]} diagnostics */
  constructor(diagnostics) {
    super(diagnostics.map((d) => `${d.code} ${d.message}`).join("; "));
    this.diagnostics = diagnostics;
    this.codes = diagnostics.map((d) => d.code);
  }
}

/** A step's own x-legacy object, copied (a non-object value there is not reused).
 * @param {JsonObject} obj @returns {JsonObject} */
export function legacyOf(obj) {
  return isObject(obj[LEGACY]) ? { ...obj[LEGACY] } : {};
}

export class Context {
  /**
   * @param {{now: number, workflow?: import("../types.js").Workflow | null,
   *   projectHint?: string|null,
   *   salvage?: boolean, file?: string, fromVersion?: string|null, sessionDir?: string|null}} o
   */
  constructor({
    now,
    workflow = null,
    projectHint = null,
    salvage = false,
    file = "",
    fromVersion = null,
    sessionDir = null,
  }) {
    this.now = now;
    // the input's version, and the session directory relative to the repository root (POSIX;
    // null: unknown): a 1.0 or 2.0 state's bare artifact names are resolved against it
    // (docs/spec.md §9.2 rule 8.8)
    this.fromVersion = fromVersion;
    this.sessionDir = sessionDir;
    this.workflow = workflow;
    this.projectHint = projectHint;
    this.salvage = salvage;
    this.file = file;
    /** @type {Diagnostic[]} */
    this.notes = [];
  }

  /** SR150: a change worth knowing. @param {string} message @param {string} [pointer] */
  note(message, pointer = "") {
    this.notes.push({ code: "SR150", message, pointer });
  }

  /**
   * SR151 without an aside (the value was kept by the caller).
   * @param {string} message
   * @param {string} [pointer]
   */
  kept(message, pointer = "") {
    this.notes.push({ code: "SR151", message, pointer });
  }

  /** Keep a value 3.0 has no place for under doc["x-legacy"][key] (key_2, key_3… when that
   * slot holds another value): SR151, never dropped.
   * @param {JsonObject} doc
   * @param {string} key
   * @param {Json} value
   * @param {string} why
   * @param {string} [pointer]
   */
  aside(doc, key, value, why, pointer = "") {
    if (!isObject(doc[LEGACY])) doc[LEGACY] = {};
    const legacy = doc[LEGACY];
    let k = key;
    if (has(legacy, k) && !deepEqual(legacy[k], value)) {
      let n = 2;
      while (has(legacy, `${key}_${n}`)) n++;
      k = `${key}_${n}`;
    }
    legacy[k] = value;
    this.kept(`${why}; kept as ${LEGACY}.${k}`, pointer);
  }

  /** Set out["x-legacy"][name] (creating the object), as Python's setdefault does.
   * @param {JsonObject} out @param {string} name @param {Json} value */
  legacySet(out, name, value) {
    if (!isObject(out[LEGACY])) out[LEGACY] = {};
    out[LEGACY][name] = value;
  }
}

/** RFC 6901 pointer from parts. @param {(string | number)[]} parts */
export const pointer = (parts) =>
  parts.map((p) => `/${String(p).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
