// What the 3.0 repair pass shares: the closed sets, key shapes and time values. Mirrors
// Python's core/migration/repair_v3/values.py.

import { formatTimestamp, parseTimestamp } from "../timeutil.mjs";
import { builtins, loadWorkflow, WorkflowError } from "../workflow.mjs";

export const VERSION = "3.0"; // the version whose known defects the repair pass fixes

export const DOTTED_KEY = /^([0-9]+)\.([0-9]+)$/;
export const STEP_KEY = /^[0-9]+(_[0-9]+)?$/;
export const DECISION_ID = /^D[0-9]{3,}$/;
export const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** @type {Record<string, string>} */
export const COMPLEXITY = { low: "simple", medium: "standard", high: "complex" };
export const RESOLVED = ["resolved", "closed", "done", "fixed", "wontfix", "won't fix"];
export const STATUSES = ["pending", "in_progress", "complete", "skipped"];
export const STEP_FIELDS = [
  "name",
  "agent",
  "status",
  "sub_step",
  "started",
  "completed",
  "artifacts",
  "context_files_used",
];
export const STEP_OPTIONAL = ["attempts", "telemetry", "skip_reason"];
export const MAX_STEP = 2 ** 53; // beyond it a number is no step number

/** @param {unknown} v @returns {v is number} */
export const isInt = (v) => typeof v === "number" && Number.isInteger(v);

/** "3.5" -> "3_5"; any other key unchanged. @param {string} key */
export function newKey(key) {
  const m = DOTTED_KEY.exec(key);
  return m ? `${m[1]}_${m[2]}` : key;
}

/** A step key's numeric order: "3_5" -> [3, 5]. @param {string} key @returns {[number, number]} */
export function keyNum(key) {
  const [a, b] = key.split("_");
  return [Number(a), Number(b ?? 0)];
}

// An ISO 8601 date-time with a zone, the forms Python's datetime.fromisoformat reads (the
// reference's test of a usable upstream time): extended or basic, T or space, a time of hours,
// minutes or seconds with a fraction, Z or an offset.
const ISO =
  /^(\d{4})-?(\d{2})-?(\d{2})[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,]\d+)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)$/;

/** @param {number} year @param {number} month */
function daysIn(year, month) {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Microseconds of an ISO date-time with a zone, or null (not one, or not a real instant).
 * @param {string} value */
function isoInstant(value) {
  const m = ISO.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0));
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59)
    return null;
  let offset = 0;
  if (m[7] !== "Z") {
    const oh = Number(m[7].slice(1, 3));
    const om = Number(m[7].slice(3).replace(":", "") || 0);
    if (oh > 23 || om > 59) return null;
    offset = (m[7][0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const day = new Date(0);
  day.setUTCFullYear(y, mo - 1, d);
  day.setUTCHours(h, mi, s, 0);
  return (day.getTime() - offset * 60000) * 1000;
}

/** A timestamp in the protocol's form: [value or null, whether the input was usable]. An
 * offset is converted to Z, second precision.
 * @param {unknown} value @returns {[string | null, boolean]} */
export function tsValue(value) {
  if (value === null || value === undefined || value === "") return [null, true];
  if (typeof value !== "string") return [null, false];
  if (parseTimestamp(value) !== null) return [value, true];
  const micros = isoInstant(value);
  return micros === null ? [null, false] : [formatTimestamp(micros), true];
}

/** @type {Set<string> | null} */
let legacyKeys = null;
/** Top-level keys of old states that some built-in workflow keeps in `decisions`.
 * @returns {Set<string>} */
export function legacyTopLevelKeys() {
  if (legacyKeys === null) {
    const keys = new Set();
    legacyKeys = keys;
    for (const name of builtins()) {
      try {
        for (const d of loadWorkflow(name).decisions) if (d.legacyTopLevel) keys.add(d.key);
      } catch (err) {
        if (!(err instanceof WorkflowError)) throw err;
      }
    }
  }
  return legacyKeys;
}
