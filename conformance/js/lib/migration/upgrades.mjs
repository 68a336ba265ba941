// The version steps 1.0 -> 2.0 -> 3.0 (docs/spec.md §9). Mirrors Python's
// core/migration/v1_to_v2.py and v2_to_v3.py.

import { clone, isObject, LEGACY, pointer } from "./context.mjs";
import { keysOf } from "../jsonread.mjs";
import { repair } from "./repair.mjs";
import { renameLetterKeys } from "./steps.mjs";

/** 1.0 -> 2.0: v2 only added the (never exercised) lock/claim fields, so this sets the version
 * and drops the informal "$schema": "session-state-v1" marker. */
/**
 * @typedef {import("../types.js").JsonObject} JsonObject
 * @typedef {import("./context.mjs").Context} Context
 */

/** @param {JsonObject} doc @param {Context} ctx @returns {JsonObject} */
export function v1ToV2(doc, ctx) {
  const out = clone(doc);
  const marker = out.$schema;
  if (typeof marker === "string" && !marker.endsWith(".json")) {
    delete out.$schema;
    ctx.note(`removed the informal version marker $schema '${marker}'`, "/$schema");
  }
  const cur = out.current_step;
  // 3.5: step "3.5", which 2.0 can hold (a string)
  if (typeof cur === "number" && !Number.isInteger(cur) && Number.isFinite(cur))
    out.current_step = String(cur);
  renameLetterKeys(out, ctx); // 3a: no version has a form for it (docs/spec.md §9.2)
  out.schema_version = "2.0";
  return out;
}

/** Whether a v2 lock or claim holds anything (zero retries and an empty event log do not count).
 * @param {unknown} v @returns {boolean} */
function hasContent(v) {
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) {
    return Object.entries(v).some(([k, x]) =>
      ["retry_count", "event_log"].includes(k) ? Boolean(x) && hasContent(x) : hasContent(x),
    );
  }
  return v !== null && v !== undefined;
}

/** 2.0 -> 3.0: remove lock, stale_threshold_ms and every claim (upstream's mandatory rules),
 * then normalise every shape 3.0 fixes (the repair pass).
 * @param {JsonObject} doc @param {Context} ctx @returns {JsonObject} */
export function v2ToV3(doc, ctx) {
  const out = clone(doc);
  for (const key of ["lock", "stale_threshold_ms"]) {
    if (!Object.hasOwn(out, key)) continue;
    const value = out[key];
    delete out[key];
    if (hasContent(value) && key === "lock")
      ctx.aside(out, key, value, `${key} held a live value`, `/${key}`);
    else ctx.note(`removed ${key} (dropped in 3.0)`, `/${key}`);
  }
  if (isObject(out.steps)) {
    for (const k of keysOf(out.steps)) {
      const step = out.steps[k];
      if (!isObject(step) || !Object.hasOwn(step, "claim")) continue;
      const claim = step.claim;
      delete step.claim;
      if (hasContent(claim)) {
        ctx.legacySet(step, "claim", claim);
        ctx.kept(
          `step ${k} claim held values; kept as steps.${k}.${LEGACY}.claim`,
          pointer(["steps", k]),
        );
      } else ctx.note(`removed the empty claim of step ${k}`, pointer(["steps", k]));
    }
  }
  out.schema_version = "3.0";
  return repair(out, ctx, { fromOld: true });
}
