// The migration chain (docs/spec.md §9): from a document's version to the current one, one
// registered step at a time (lib/versions.mjs), each result checked against its version's
// schema. Pure: no I/O, the clock given. Every change is noted: SR150 (a change worth
// knowing), SR151 (a value 3.0 has no place for, kept under `x-legacy`, never dropped).
// Migrating a current document is a no-op unless it carries a defect its version's repair
// pass fixes, so the chain is idempotent. The pieces live in lib/migration/ (mirroring
// Python's core/migration/).

import { MAX_DEPTH } from "./jsonread.mjs";
import { pyRepr } from "./findings.mjs";
import { explain } from "./schema.mjs";
import { CURRENT, isKnown, KNOWN, newerThanKnown, schemaOf, versionOf } from "./versions.mjs";
import { Context, deepEqual, isObject, MigrationError } from "./migration/context.mjs";
import { finish, settle } from "./migration/contradictions.mjs";
import { chooseWorkflow, repair } from "./migration/repair.mjs";
import { v1ToV2, v2ToV3 } from "./migration/upgrades.mjs";

export { Context, deepEqual, MigrationError };

/** @typedef {import("./types.js").JsonObject} JsonObject */
/** @typedef {import("./types.js").Workflow} Workflow */
/** @typedef {import("./types.js").Diagnostic} Diagnostic */
/** @typedef {(doc: JsonObject, ctx: Context) => JsonObject} Step */

/** The migration step that produces each version from the one before (versions.mjs order).
 * @type {Record<string, Step>} */
const STEPS = { "2.0": v1ToV2, "3.0": v2ToV3 };
/** The repair pass of a version's known defects, run on documents written at that version.
 * @type {Record<string, Step>} */
const REPAIRS = { "3.0": (doc, ctx) => repair(doc, ctx) };
for (const v of KNOWN.slice(1)) {
  if (!(v in STEPS)) throw new Error(`versions.mjs names ${v} but migrate.mjs has no step to it`);
}

/**
 * Nesting depth as the reader counts it (an object or array is one level).
 * @param {unknown} value
 */
function depth(value) {
  let deepest = 0;
  /** @type {[unknown, number][]} */
  const stack = [[value, 1]];
  while (stack.length) {
    const [v, d] = /** @type {[unknown, number]} */ (stack.pop());
    if (v === null || typeof v !== "object") continue;
    deepest = Math.max(deepest, d);
    for (const c of Array.isArray(v) ? v : Object.values(v)) stack.push([c, d + 1]);
  }
  return deepest;
}

/** Refuse (SR152) a document too deep or not valid at `version`.
 * @param {JsonObject} doc @param {string} version @param {string} when */
function mustBeValid(doc, version, when) {
  if (depth(doc) > MAX_DEPTH) {
    // x-legacy nests a value one level deeper: the reader would refuse the result (SR123)
    throw new MigrationError([
      {
        code: "SR152",
        message: `${when}, the document would nest deeper than ${MAX_DEPTH} levels (a value kept under x-legacy is one level deeper); flatten it by hand`,
        pointer: "",
      },
    ]);
  }
  const errors = explain(schemaOf(version), doc);
  if (errors.length) {
    // the reference's words: each schema finding's code, words and pointer (chain.py _check)
    throw new MigrationError(
      errors.map((f) => ({
        code: "SR152",
        message: `${when}, the document is not a valid ${version} state: ${f.code} ${f.message}`,
        pointer: f.pointer ?? "",
      })),
    );
  }
}

/**
 * Migrate to the current version (or repair a current document). Pure; throws MigrationError
 * (SR141/SR142/SR152) when it cannot. `salvage`: resolve contradictions instead of refusing
 * (docs/spec.md §9.4).
 * @param {JsonObject} doc
 * @param {{now: number, workflow?: Workflow | null, projectHint?: string | null,
 *   salvage?: boolean, file?: string, sessionDir?: string | null}} opts
 * @returns {{document: JsonObject, changed: boolean, codes: string[], notes: Diagnostic[],
 *   from: string}}
 */
export function migrate(
  doc,
  { now, workflow = null, projectHint = null, salvage = false, file = "", sessionDir = null },
) {
  const v = versionOf(doc);
  const at = [{ pointer: "/schema_version" }];
  if (v.invalid)
    throw new MigrationError([
      {
        code: "SR142",
        message: `schema_version ${doc.schema_version == null ? "is not set; it must be" : `${pyRepr(doc.schema_version)} is not`} a version string`,
        ...at[0],
      },
    ]);
  if (newerThanKnown(v.num))
    throw new MigrationError([
      {
        code: "SR141",
        message: `schema version ${v.raw} is newer than ${CURRENT}; refusing to touch it`,
        ...at[0],
      },
    ]);
  if (!isKnown(v.raw))
    throw new MigrationError([
      { code: "SR142", message: `schema version ${v.raw} does not exist`, ...at[0] },
    ]);
  const ctx = new Context({
    now,
    workflow,
    projectHint,
    salvage,
    file,
    fromVersion: v.raw,
    sessionDir,
  });
  let cur = doc;
  if (REPAIRS[v.raw]) {
    // known defects of documents written at this version, fixed before they move on
    cur = REPAIRS[v.raw](cur, ctx);
    mustBeValid(cur, v.raw, `after the ${v.raw} repair`);
  }
  let src = v.raw;
  for (const next of KNOWN.slice(KNOWN.indexOf(v.raw) + 1)) {
    cur = STEPS[next](cur, ctx);
    mustBeValid(cur, next, `after ${src}->${next}`);
    src = next;
  }
  if (!deepEqual(cur, doc)) {
    // the end of every migration that changes something: revision, updated (the old one
    // kept), then the contradictions (docs/spec.md §9.3, §9.4)
    const wf = chooseWorkflow(cur, ctx, { quiet: true });
    finish(doc, cur, ctx);
    settle(cur, wf, ctx);
    mustBeValid(cur, CURRENT, "after the migration");
  }
  const changed = !deepEqual(cur, doc);
  // a document that did not change has nothing to report
  const notes = changed ? ctx.notes : [];
  return {
    document: cur,
    changed,
    codes: [...new Set(notes.map((n) => n.code))],
    notes,
    from: v.raw,
  };
}

/** The pure check behind "no dead ends" (docs/spec.md §9.5): "migrate" when migrating `doc`
 * changes it into a valid state, "migrate --salvage" when only salvage does, else null.
 * @param {unknown} doc
 * @param {{now: number, workflow?: Workflow | null, projectHint?: string | null}} opts
 * @returns {"migrate" | "migrate --salvage" | null} */
export function repairCommand(doc, { now, workflow = null, projectHint = null }) {
  if (!isObject(doc)) return null;
  for (const salvage of [false, true]) {
    let res;
    try {
      res = migrate(doc, { now, workflow, projectHint, salvage });
    } catch (err) {
      if (err instanceof MigrationError) continue;
      if (err instanceof RangeError) return null; // advice only: never break its caller
      throw err;
    }
    return res.changed ? (salvage ? "migrate --salvage" : "migrate") : null;
  }
  return null;
}
