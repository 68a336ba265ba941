// The 3.0 repair of the step records and current_step (docs/spec.md §9.2). Mirrors
// Python's core/migration/repair_v3/steps.py.

import { pyRepr } from "../findings.mjs";
import { keysOf, setKeyOrder } from "../jsonread.mjs";
import { posix } from "node:path";
import {
  clone,
  has,
  isObject,
  LEGACY,
  legacyOf,
  MigrationError,
  pointer,
  sameShape,
} from "./context.mjs";
import {
  isInt,
  keyNum,
  MAX_STEP,
  newKey,
  STATUSES,
  STEP_FIELDS,
  STEP_KEY,
  STEP_OPTIONAL,
  tsValue,
  VERSION,
} from "./values.mjs";

/**
 * @typedef {import("../types.js").Json} Json
 * @typedef {import("../types.js").JsonObject} JsonObject
 */
/**
 * @typedef {import("../types.js").Workflow} Workflow
 * @typedef {import("../types.js").StepDef} StepDef
 * @typedef {import("./context.mjs").Context} Context
 */

const LETTER_KEY = /^([0-9]+)([a-z])$/;

/** Letter-suffixed step keys (3a, 3b: an execution plan's inserted steps) have no form in any
 * version: each becomes the next free sub-number of its step (3a -> 3_1, in key order), the
 * original key kept as the step's x-legacy.key (SR151; docs/spec.md §9.2).
 * @param {JsonObject} doc @param {Context} ctx
 */
export function renameLetterKeys(doc, ctx) {
  const steps = doc.steps;
  if (!isObject(steps) || !Object.keys(steps).some((k) => LETTER_KEY.test(k))) return;
  const taken = new Set(Object.keys(steps).map(newKey));
  /** @type {JsonObject} */
  const out = {};
  /** @type {string[]} the keys in the text's order, renamed ones in place (the reference's) */
  const order = [];
  for (const key of keysOf(steps)) {
    const step0 = steps[key];
    const m = LETTER_KEY.exec(key);
    if (m === null) {
      out[key] = step0;
      order.push(key);
      continue;
    }
    let n = 1;
    while (taken.has(`${m[1]}_${n}`)) n++;
    const renamed = `${m[1]}_${n}`;
    taken.add(renamed);
    let step = step0;
    if (isObject(step)) step = { ...step, [LEGACY]: { ...legacyOf(step), key } };
    out[renamed] = step;
    order.push(renamed);
    ctx.kept(
      `step key ${pyRepr(key)} renamed ${pyRepr(renamed)}${isObject(step0) ? `; kept as steps.${renamed}.x-legacy.key` : ""}`,
      pointer(["steps", key]),
    );
  }
  setKeyOrder(out, order);
  doc.steps = out;
}

/**
 * @param {JsonObject} doc @param {Workflow | null} wf @param {Context} ctx
 * @returns {Record<string, JsonObject>}
 */
export function repairSteps(doc, wf, ctx) {
  renameLetterKeys(doc, ctx);
  let steps = doc.steps;
  if (!isObject(steps)) {
    if (steps !== null && steps !== undefined) {
      throw new MigrationError([
        { code: "SR152", message: "steps is not an object", pointer: "/steps" },
      ]);
    }
    steps = {};
  }
  let renamed = new Map();
  for (const key of keysOf(steps)) {
    const step = steps[key];
    const k = newKey(key);
    if (k !== key) {
      if (has(steps, k)) {
        ctx.aside(
          doc,
          `step_${key}`,
          step,
          `step '${key}' duplicates step '${k}'`,
          pointer(["steps", key]),
        );
        continue;
      }
      ctx.note(`step key '${key}' renamed '${k}'`, pointer(["steps", key]));
    }
    if (!STEP_KEY.test(k)) {
      ctx.aside(
        doc,
        `step_${key}`,
        step,
        `step key ${pyRepr(key)} is not N or N_M`,
        pointer(["steps", key]),
      );
      continue;
    }
    renamed.set(k, step);
  }
  if (wf && !wf.freeSteps) renamed = addWorkflowSteps(renamed, wf, ctx);
  /** @type {Record<string, JsonObject>} */
  const fixed = {};
  for (const [k, step] of renamed) fixed[k] = repairStep(k, step, wf, doc, ctx);
  if (!sameShape(fixed, steps)) doc.steps = fixed;
  return fixed;
}

/** The workflow's missing steps, added, and everything in workflow order.
 * @param {Map<string, Json>} renamed @param {Workflow} wf @param {Context} ctx
 * @returns {Map<string, Json>}
 */
function addWorkflowSteps(renamed, wf, ctx) {
  let lastStarted = -1;
  for (const [k, st] of renamed) {
    const i = wf.stepKeys.indexOf(k);
    if (i >= 0 && isObject(st) && ["in_progress", "complete", "skipped"].includes(st.status))
      lastStarted = Math.max(lastStarted, i);
  }
  wf.steps.forEach((def, i) => {
    if (renamed.has(def.key)) return;
    if (i < lastStarted) {
      // The step did not exist when the session passed this point (apex 3_5, added mid-v1):
      // skipped, rather than pretend it is still to do.
      renamed.set(def.key, {
        status: "skipped",
        skip_reason: "added by migration: the step did not exist when the session passed it",
      });
      ctx.note(
        `step ${def.key} (${def.name}) added as skipped (later steps had run)`,
        pointer(["steps", def.key]),
      );
    } else {
      renamed.set(def.key, { status: "pending" });
      ctx.note(`step ${def.key} (${def.name}) added as pending`, pointer(["steps", def.key]));
    }
  });
  const rank = (/** @type {string} */ k) =>
    wf.stepKeys.includes(k) ? wf.stepKeys.indexOf(k) : wf.stepKeys.length;
  const order = [...renamed.keys()].sort(
    (a, b) => rank(a) - rank(b) || keyNum(a)[0] - keyNum(b)[0] || keyNum(a)[1] - keyNum(b)[1],
  );
  return new Map(order.map((k) => [k, renamed.get(k)]));
}

/**
 * @param {string} key
 * @param {Json} input
 * @param {Workflow | null} wf
 * @param {JsonObject} doc
 * @param {Context} ctx
 * @returns {JsonObject}
 */
function repairStep(key, input, wf, doc, ctx) {
  const def = wf ? wf.step(key) : null;
  const base = ["steps", key];
  let step = input ?? {};
  if (!isObject(step)) {
    ctx.aside(doc, `step_${key}`, step, `step ${key} is not an object`, pointer(base));
    step = {};
  }
  const out = clone(step);
  // added by repairSteps: its note says it all
  const fresh = Object.keys(step).every((k) => k === "status" || k === "skip_reason");
  stepNames(key, out, def, ctx, base, fresh);
  stepStatus(key, out, doc, ctx, base);
  stepTimes(key, out, doc, ctx, base);
  stepSubStep(key, out, def, ctx, base);
  stepLists(key, out, step, ctx, base);
  stepUnknownFields(key, out, ctx, base);
  /** @type {JsonObject} */
  const ordered = {};
  for (const k of STEP_FIELDS) ordered[k] = out[k];
  for (const k of Object.keys(out)) if (!has(ordered, k)) ordered[k] = out[k];
  return sameShape(ordered, step) ? step : ordered;
}

/**
 * @param {string} key
 * @param {JsonObject} out
 * @param {StepDef | null} def
 * @param {Context} ctx
 * @param {string[]} base
 * @param {boolean} fresh
 */
function stepNames(key, out, def, ctx, base, fresh) {
  if (typeof out.name !== "string" || out.name === "") {
    if (has(out, "name")) ctx.aside(out, "name", out.name, "name was not a string", pointer(base));
    out.name = def ? def.name : `Step ${key}`;
    if (!fresh) ctx.note(`step ${key}: name set to '${out.name}'`, pointer([...base, "name"]));
  }
  if (typeof out.agent !== "string") {
    if (has(out, "agent"))
      ctx.aside(out, "agent", out.agent, "agent was not a string", pointer(base));
    out.agent = def && def.agents.length === 1 ? def.agents[0] : "";
    if (!fresh) ctx.note(`step ${key}: agent set to '${out.agent}'`, pointer([...base, "agent"]));
  }
}

/**
 * @param {string} key
 * @param {JsonObject} out
 * @param {JsonObject} doc
 * @param {Context} ctx
 * @param {string[]} base
 */
function stepStatus(key, out, doc, ctx, base) {
  const status = out.status ?? null; // a missing status is kept as null, as the reference keeps it
  if (typeof status === "string" && STATUSES.includes(status)) return;
  if (status === "blocked") {
    // a blocker is an open finding of a step still in progress
    out.status = "in_progress";
    const title = `step ${key} (${out.name}) is blocked`;
    if (!has(doc, "open_findings")) doc.open_findings = [];
    if (Array.isArray(doc.open_findings) && !doc.open_findings.includes(title))
      doc.open_findings.push(title);
    ctx.legacySet(out, "status", status);
    ctx.note(
      `step ${key}: status 'blocked' became in_progress plus the open finding '${title}'`,
      pointer([...base, "status"]),
    );
  } else {
    ctx.legacySet(out, "status", status);
    out.status = "pending";
    ctx.kept(
      `${status === null || status === undefined ? `step ${key} has no status` : `step ${key}: status ${pyRepr(status)} is not a ${VERSION} status`}; set to pending, kept as x-legacy.status`,
      pointer([...base, "status"]),
    );
  }
}

/**
 * @param {string} key
 * @param {JsonObject} out
 * @param {JsonObject} doc
 * @param {Context} ctx
 * @param {string[]} base
 */
function stepTimes(key, out, doc, ctx, base) {
  for (const name of ["started", "completed"]) {
    const raw = out[name];
    const [ts, ok] = tsValue(raw);
    if (!ok) {
      ctx.legacySet(out, name, raw);
      ctx.kept(
        `step ${key}: ${name} ${pyRepr(raw)} is not a timestamp; kept as x-legacy.${name}`,
        pointer([...base, name]),
      );
    }
    if (ts !== raw || !has(out, name)) {
      if (has(out, name) && raw !== null && raw !== "" && ts !== null)
        ctx.note(
          `step ${key}: ${name} ${pyRepr(raw)} rewritten as ${ts}`,
          pointer([...base, name]),
        );
      out[name] = ts;
    }
  }
  if (out.status === "complete" && out.completed === null) {
    out.completed = doc.updated ?? null; // the latest it can have been
    ctx.note(
      `step ${key}: complete without a completion time; completed set to the state's updated time (the latest it can have been)`,
      pointer([...base, "completed"]),
    );
  }
  if (out.status === "in_progress" && out.started === null) {
    out.started = doc.updated ?? null;
    ctx.note(
      `step ${key}: in_progress without a start time; started set to the state's updated time`,
      pointer([...base, "started"]),
    );
  }
}

/**
 * @param {string} key
 * @param {JsonObject} out
 * @param {StepDef | null} def
 * @param {Context} ctx
 * @param {string[]} base
 */
function stepSubStep(key, out, def, ctx, base) {
  const sub = out.sub_step;
  const ptr = pointer([...base, "sub_step"]);
  if (sub === "" || !has(out, "sub_step")) out.sub_step = null;
  else if (sub !== null && typeof sub !== "string") {
    ctx.legacySet(out, "sub_step", sub);
    out.sub_step = null;
    ctx.kept(`step ${key}: sub_step ${pyRepr(sub)} is not a string`, ptr);
  } else if (typeof sub === "string" && ["complete", "pending", "skipped"].includes(out.status)) {
    out.sub_step = null;
    out[LEGACY] = { ...legacyOf(out), sub_step: sub };
    ctx.kept(
      `step ${key}: sub_step '${sub}' cleared (a ${out.status} step has none); kept as x-legacy.sub_step`,
      ptr,
    );
  } else if (typeof sub === "string" && def && !def.checkpoints.includes(sub)) {
    let current = has(def.legacy, sub) ? def.legacy[sub] : null;
    if (current === null && def.checkpoints.includes(sub.replaceAll(".", "_")))
      current = sub.replaceAll(".", "_");
    if (current !== null) {
      out.sub_step = current;
      ctx.note(`step ${key}: checkpoint '${sub}' renamed '${current}'`, ptr);
    }
  }
}

/**
 * @param {string} key
 * @param {JsonObject} out
 * @param {JsonObject} step
 * @param {Context} ctx
 * @param {string[]} base
 */
function stepLists(key, out, step, ctx, base) {
  for (const name of ["artifacts", "context_files_used"]) {
    const value = out[name];
    if (value === null || value === undefined) {
      out[name] = [];
      if (has(step, name))
        ctx.note(`step ${key}: ${name} null became []`, pointer([...base, name]));
    } else if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v)) {
      ctx.legacySet(out, name, value);
      out[name] = Array.isArray(value) ? value.filter((v) => typeof v === "string" && v) : [];
      ctx.kept(
        `step ${key}: ${name} held non-path items; kept as x-legacy.${name}`,
        pointer([...base, name]),
      );
    }
    if (ctx.fromVersion === "1.0" || ctx.fromVersion === "2.0")
      oneFormList(key, out, name, ctx, base);
  }
}

/** A listed path in the one form every write stores (docs/spec.md §4): normalised POSIX, a
 * bare name (no `/`) resolved against the session directory `dir` (null or "." : kept).
 * @param {string} path @param {string | null} dir @returns {string}
 */
export function oneForm(path, dir) {
  let p = path && !path.startsWith("/") ? posix.normalize(path) : path;
  if (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  if (dir !== null && dir !== "" && dir !== "." && !p.includes("/") && p !== "." && p !== "..")
    p = `${dir}/${p}`;
  return p;
}

/** A 1.0 or 2.0 step's listed paths in the one form (docs/spec.md §9.2 rule 8.8); a later item
 * naming a file already listed is dropped.
 * @param {string} key
 * @param {JsonObject} out
 * @param {string} name
 * @param {Context} ctx
 * @param {string[]} base
 */
function oneFormList(key, out, name, ctx, base) {
  const seen = new Set();
  const fixed = [];
  for (const p of out[name]) {
    const q = oneForm(p, ctx.sessionDir);
    if (seen.has(q)) {
      ctx.note(
        `step ${key}: ${name} item '${p}' names ${q} again; dropped`,
        pointer([...base, name]),
      );
      continue;
    }
    if (q !== p)
      ctx.note(`step ${key}: ${name} item '${p}' stored as ${q}`, pointer([...base, name]));
    seen.add(q);
    fixed.push(q);
  }
  if (fixed.length !== out[name].length || fixed.some((q, i) => q !== out[name][i]))
    out[name] = fixed;
}

/** Unknown step fields move to x-legacy (3.0 steps are closed).
 * @param {string} key @param {JsonObject} out @param {Context} ctx @param {string[]} base
 */
function stepUnknownFields(key, out, ctx, base) {
  for (const k of Object.keys(out)) {
    if (STEP_FIELDS.includes(k) || STEP_OPTIONAL.includes(k) || k.startsWith("x-")) continue;
    const value = out[k];
    delete out[k];
    ctx.legacySet(out, k, value);
    ctx.kept(
      `step ${key}: field '${k}' is not part of a ${VERSION} step; kept as x-legacy.${k}`,
      pointer([...base, k]),
    );
  }
}

/** @param {JsonObject} doc @param {Record<string, JsonObject>} steps @param {Context} ctx */
export function repairCurrentStep(doc, steps, ctx) {
  const cur = doc.current_step;
  // 2.0 is the integer 2 (docs/spec.md §2.1)
  if (isInt(cur) && cur >= 0 && cur <= MAX_STEP) return;
  let value;
  if (typeof cur === "string" && /^[0-9]+([._][0-9]+)?$/.test(cur)) {
    value = Number(cur.split(/[._]/)[0]);
    // "3.5": the step number is 3, the sub-step kept
    if (!/^[0-9]+$/.test(cur))
      ctx.aside(doc, "current_step", cur, `current_step ${pyRepr(cur)} names a sub-step`);
  } else {
    const running = Object.entries(steps)
      .filter(([, s]) => s.status === "in_progress")
      .map(([k]) => k);
    value = running.length ? keyNum(running[0])[0] : 0;
    if (cur !== undefined && cur !== null)
      ctx.aside(
        doc,
        "current_step",
        cur,
        `current_step ${pyRepr(cur)} is not a step number`,
        "/current_step",
      );
  }
  doc.current_step = value;
  const was = cur === null || cur === undefined ? "was not set" : `was ${pyRepr(cur)}`;
  ctx.note(`current_step set to ${value} (it ${was})`, "/current_step");
}
