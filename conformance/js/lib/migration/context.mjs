// What every migration step shares (docs/spec.md §9): the context (clock, workflow, salvage,
// the coded notes and the x-legacy aside) and the error. Mirrors Python's
// core/migration/context.py.

export const LEGACY = "x-legacy";

export const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
export const clone = (v) => (v === undefined ? undefined : structuredClone(v));
export const has = (o, k) => Object.hasOwn(o, k);

export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => has(b, k) && deepEqual(a[k], b[k]));
}

/** Equal values with the same key order (a renamed or reordered key is a change). */
export const sameShape = (a, b) =>
  deepEqual(a, b) && Object.keys(a).join("\0") === Object.keys(b).join("\0");

/** A migration was refused; `diagnostics` ({code, message, pointer}) say why. */
export class MigrationError extends Error {
  constructor(diagnostics) {
    super(diagnostics.map((d) => `${d.code} ${d.message}`).join("; "));
    this.diagnostics = diagnostics;
    this.codes = diagnostics.map((d) => d.code);
  }
}

/** A step's own x-legacy object, copied (a non-object value there is not reused). */
export function legacyOf(obj) {
  return isObject(obj[LEGACY]) ? { ...obj[LEGACY] } : {};
}

export class Context {
  /** @param {{now: number, workflow?: any, projectHint?: string|null, salvage?: boolean, file?: string, fromVersion?: string|null, sessionDir?: string|null}} o */
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
    this.notes = [];
  }

  /** SR150: a change worth knowing. */
  note(message, pointer = "") {
    this.notes.push({ code: "SR150", message, pointer });
  }

  /** SR151 without an aside (the value was kept by the caller). */
  kept(message, pointer = "") {
    this.notes.push({ code: "SR151", message, pointer });
  }

  /** Keep a value 3.0 has no place for under doc["x-legacy"][key] (key_2, key_3… when that
   * slot holds another value): SR151, never dropped. */
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

  /** Set out["x-legacy"][name] (creating the object), as Python's setdefault does. */
  legacySet(out, name, value) {
    if (!isObject(out[LEGACY])) out[LEGACY] = {};
    out[LEGACY][name] = value;
  }
}

/** RFC 6901 pointer from parts. */
export const pointer = (parts) =>
  parts.map((p) => `/${String(p).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
