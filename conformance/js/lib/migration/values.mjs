// What the 3.0 repair pass shares: the closed sets, key shapes and time values. Mirrors
// Python's core/migration/repair_v3/values.py.

import { formatTimestamp, parseTimestamp } from "../timestamps.mjs";
import { builtins, loadWorkflow, WorkflowError } from "../workflow.mjs";

export const VERSION = "3.0"; // the version whose known defects the repair pass fixes

export const DOTTED_KEY = /^([0-9]+)\.([0-9]+)$/;
export const STEP_KEY = /^[0-9]+(_[0-9]+)?$/;
export const DECISION_ID = /^D[0-9]{3,}$/;
export const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const COMPLEXITY = { low: "simple", medium: "standard", high: "complex" };
export const RESOLVED = ["resolved", "closed", "done", "fixed", "wontfix", "won't fix"];
export const STATUSES = ["pending", "in_progress", "complete", "skipped"];
export const STEP_FIELDS = ["name", "agent", "status", "sub_step", "started", "completed", "artifacts", "context_files_used"];
export const STEP_OPTIONAL = ["attempts", "telemetry", "skip_reason"];
export const MAX_STEP = 2 ** 53; // beyond it a number is no step number

export const isInt = (v) => typeof v === "number" && Number.isInteger(v);

/** "3.5" -> "3_5"; any other key unchanged. */
export function newKey(key) {
  const m = DOTTED_KEY.exec(key);
  return m ? `${m[1]}_${m[2]}` : key;
}

/** A step key's numeric order: "3_5" -> [3, 5]. */
export function keyNum(key) {
  const [a, b] = key.split("_");
  return [Number(a), Number(b ?? 0)];
}

/** A timestamp in the protocol's form: [value or null, whether the input was usable]. An
 * offset is converted to Z. */
export function tsValue(value) {
  if (value === null || value === undefined || value === "") return [null, true];
  if (typeof value !== "string") return [null, false];
  if (parseTimestamp(value) !== null) return [value, true];
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})$/.exec(value);
  if (!m) return [null, false];
  const ms = Date.parse(`${m[1]}T${m[2]}${m[3]}`);
  if (Number.isNaN(ms)) return [null, false];
  return [formatTimestamp(ms * 1000), true];
}

let legacyKeys = null;
/** Top-level keys of old states that some built-in workflow keeps in `decisions`. */
export function legacyTopLevelKeys() {
  if (legacyKeys === null) {
    legacyKeys = new Set();
    for (const name of builtins()) {
      try {
        for (const d of loadWorkflow(name).decisions) if (d.legacyTopLevel) legacyKeys.add(d.key);
      } catch (err) {
        if (!(err instanceof WorkflowError)) throw err;
      }
    }
  }
  return legacyKeys;
}

/** Python's repr of a JSON scalar, for the few places the reference writes one into the
 * document (a non-integral step number 3.5 becomes the string "3.5"). */
export function pyNumber(n) {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}
