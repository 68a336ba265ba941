// The 3.0 repair pass (docs/spec.md §9): normalise the shapes upstream 3.0 writers produced
// that the 3.0 schema rejects. A valid 3.0 document comes out unchanged, so migration stays
// idempotent. Also the second half of the 2.0 -> 3.0 step (`fromOld`). Mirrors Python's
// core/migration/repair_v3/__init__.py.

import { pyRepr } from "../findings.mjs";
import { CORE_KEYS } from "../rules.mjs";
import { formatTimestamp } from "../timeutil.mjs";
import { builtins, loadWorkflow, WorkflowError } from "../workflow.mjs";
import { clone, isObject, pointer } from "./context.mjs";
import {
  repairDecisionLog,
  repairDecisions,
  repairFindings,
  repairReviewAudit,
} from "./records.mjs";
import { repairCurrentStep, repairSteps } from "./steps.mjs";
import { legacyTopLevelKeys, PROJECT, tsValue, VERSION } from "./values.mjs";

/**
 * @typedef {import("../types.js").Json} Json
 * @typedef {import("../types.js").JsonObject} JsonObject
 */
/**
 * @typedef {import("../types.js").Workflow} Workflow
 * @typedef {import("./context.mjs").Context} Context
 */

/**
 * @param {JsonObject} doc
 * @param {Context} ctx
 * @param {{fromOld?: boolean}} [opts]
 * @returns {JsonObject}
 */
export function repair(doc, ctx, { fromOld = false } = {}) {
  const out = clone(doc);
  const wf = chooseWorkflow(out, ctx);
  if (fromOld) {
    if (wf && !Object.hasOwn(out, "workflow")) {
      out.workflow = wf.id;
      ctx.note(`workflow set to '${wf.id}'`, "/workflow");
    }
    topLevelExtras(out, wf, ctx);
  }
  fixProject(out, ctx);
  fixUpdated(out, ctx);
  const steps = repairSteps(out, wf, ctx);
  repairCurrentStep(out, steps, ctx);
  repairReviewAudit(out, ctx);
  repairFindings(out, ctx);
  repairDecisions(out, wf, ctx);
  repairDecisionLog(out, ctx);
  return out;
}

/** Python's sorted() order of strings: by code point. @param {string} a @param {string} b */
const byCodePoint = (a, b) => {
  const [x, y] = [
    [...a].map((c) => c.codePointAt(0) ?? 0),
    [...b].map((c) => c.codePointAt(0) ?? 0),
  ];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

/** The state's own workflow (a built-in named by id: a state's field is never a path); for a
 * state that names none, the built-in that adopts unnamed states when its step names fit,
 * else the first built-in with free steps. `quiet`: the choice was noted already.
 * @param {JsonObject} doc @param {Context} ctx @param {{quiet?: boolean}} [opts]
 * @returns {Workflow | null}
 */
export function chooseWorkflow(doc, ctx, { quiet = false } = {}) {
  if (ctx.workflow) return ctx.workflow;
  let all;
  try {
    if (doc.workflow !== undefined && doc.workflow !== null) {
      return typeof doc.workflow === "string" && builtins().includes(doc.workflow)
        ? loadWorkflow(doc.workflow)
        : null;
    }
    all = builtins().map((b) => loadWorkflow(b));
  } catch (err) {
    if (err instanceof WorkflowError) return null;
    throw err;
  }
  const adopter = all.find((w) => w.adoptsUnnamed) ?? null;
  const free = all.find((w) => w.freeSteps) ?? null;
  if (adopter === null) return free;
  const names = new Set(adopter.steps.map((s) => s.name));
  const steps = isObject(doc.steps) ? Object.values(doc.steps) : [];
  const foreign = [
    ...new Set(
      steps
        .filter((s) => isObject(s) && typeof s.name === "string" && !names.has(s.name))
        .map((s) => /** @type {string} */ (/** @type {JsonObject} */ (s).name)),
    ),
  ].sort(byCodePoint);
  if (foreign.length && free !== null) {
    if (!quiet)
      ctx.note(
        `step names ${foreign.map(pyRepr).join(", ")} are not ${adopter.id} steps; the session is migrated under the ${free.id} workflow`,
      );
    return free;
  }
  return adopter;
}

/** @param {JsonObject} doc @param {Workflow | null} wf @param {Context} ctx */
function topLevelExtras(doc, wf, ctx) {
  const known = new Set([...CORE_KEYS, ...(wf ? wf.fields.map((f) => f.name) : [])]);
  for (const key of Object.keys(doc)) {
    if (known.has(key) || key.startsWith("x-")) continue;
    if (legacyTopLevelKeys().has(key)) continue; // moved into decisions (or aside) by repairDecisions
    const value = doc[key];
    delete doc[key];
    ctx.aside(doc, key, value, `top-level key '${key}' is not part of ${VERSION}`, pointer([key]));
  }
}

/** @param {JsonObject} doc @param {Context} ctx */
function fixProject(doc, ctx) {
  const p = doc.project;
  if (typeof p === "string" && PROJECT.test(p) && p.length <= 128) return;
  const hint = ctx.projectHint;
  if (hint && PROJECT.test(hint)) {
    if (p !== undefined && p !== null)
      ctx.aside(doc, "project", p, `project ${pyRepr(p)} is not a valid project name`, "/project");
    doc.project = hint;
    ctx.note(`project set to '${hint}' from the session directory`, "/project");
  }
}

/** @param {JsonObject} doc @param {Context} ctx */
function fixUpdated(doc, ctx) {
  const raw = doc.updated;
  const [ts, ok] = tsValue(raw);
  if (ts !== null) {
    if (ts !== raw) {
      doc.updated = ts;
      ctx.note(`updated ${pyRepr(raw)} rewritten as ${ts}`, "/updated");
    }
    return;
  }
  if (!ok) ctx.aside(doc, "updated", raw, `updated ${pyRepr(raw)} is not a timestamp`, "/updated");
  doc.updated = formatTimestamp(ctx.now);
  ctx.note("updated was empty; set to the migration time", "/updated");
}
