// The end of every migration that changes a document (docs/spec.md §9.3, §9.4): the new
// revision and updated (the original updated kept as x-legacy.updated), the current_step the
// steps say, and the contradictions no rule can settle: refused, or with salvage resolved one
// documented way per code, every displaced value kept under x-legacy (SR151). Pure; the clock
// is the context's. Mirrors Python's core/migration/contradictions.py.

import { checkStateFound, keyOrder, orderedKeys } from "../rules.mjs";
import { formatTimestamp, parseTimestamp } from "../timeutil.mjs";
import { isInt, tsValue } from "./values.mjs";
import { deepEqual, has, isObject, LEGACY, legacyOf, MigrationError, pointer } from "./context.mjs";

/**
 * @typedef {import("../types.js").JsonObject} JsonObject
 * @typedef {import("./context.mjs").Context} Context
 */
/** @typedef {import("../types.js").Workflow} Workflow */

// The semantic errors a migration refuses to write (and salvage resolves).
export const CONTRADICTIONS = ["SR301", "SR302", "SR303", "SR304", "SR306", "SR307"];

/** revision + 1, updated the migration time, the original updated kept as x-legacy.updated.
 * In the document, so the dry-run patch holds them too.
 * @param {JsonObject} original @param {JsonObject} doc @param {Context} ctx */
export function finish(original, doc, ctx) {
  const prev = doc.revision;
  doc.revision = (isInt(prev) ? prev : 0) + 1;
  const now = formatTimestamp(ctx.now);
  const raw = original.updated;
  const [ts] = tsValue(raw);
  if (ts !== null && raw !== now)
    ctx.aside(doc, "updated", raw, `updated ${quoted(raw)} replaced by the migration time ${now}`);
  doc.updated = now;
}

/** A timestamp as the reference's note writes it (Python's repr of a plain string).
 * @param {unknown} raw */
const quoted = (raw) =>
  typeof raw === "string" && !/['\\\x00-\x1f\x7f]/.test(raw) ? `'${raw}'` : JSON.stringify(raw);

/** Settle what a rule can, then refuse (SR152, one per contradiction, naming --salvage) or,
 * with ctx.salvage, resolve the rest.
 * @param {JsonObject} doc @param {Workflow | null} wf @param {Context} ctx */
export function settle(doc, wf, ctx) {
  if (ctx.salvage) salvage(doc, wf, ctx);
  currentStep(doc, ctx);
  const left = contradictions(doc, wf);
  if (!left.length) return;
  const tail = ctx.salvage
    ? "no salvage rule resolves it; fix it by hand"
    : `\`session-resume migrate --salvage ${ctx.file || "PATH"}\` resolves it (docs/spec.md §9.4)`;
  throw new MigrationError(
    left.map((f) => ({
      code: "SR152",
      message: `${cause(f, ctx)}the migrated state would contradict itself: ${f.code} ${f.message}; ${tail}`,
      pointer: f.pointer ?? "",
    })),
  );
}

/** What the file itself holds that led to contradiction `f`: the repairs the migration made to
 * the same step, as the reference's `_cause` words them.
 * @param {{pointer?: string | null}} f @param {Context} ctx */
function cause(f, ctx) {
  const place = (f.pointer ?? "").split("/").slice(0, 3).join("/");
  if ((f.pointer ?? "").split("/").length < 3) return "";
  const made = ctx.notes
    .filter(
      (/** @type {{pointer?: string}} */ n) =>
        (n.pointer ?? "").split("/").slice(0, 3).join("/") === place,
    )
    .map((/** @type {{message: string}} */ n) => n.message);
  return made.length ? `${made.join("; ")}, so ` : "";
}

/** The codes of CONTRADICTIONS in doc, once per occurrence.
 * @param {JsonObject} doc @param {Workflow | null} wf @returns {import("../types.js").Found[]} */
export function contradictions(doc, wf) {
  const found = checkStateFound(doc, wf, {
    now: null,
    skew: 0,
    root: ".",
    sessionDir: ".",
    checkArtifacts: false,
    againstUpdated: false,
  });
  return found.filter((f) => CONTRADICTIONS.includes(f.code));
}

/** SR307: the one in-progress step says more than the counter (docs/spec.md §9.4).
 * @param {JsonObject} doc @param {Context} ctx */
function currentStep(doc, ctx) {
  const steps = doc.steps;
  if (!isObject(steps)) return;
  const running = Object.keys(steps).filter(
    (k) => isObject(steps[k]) && steps[k].status === "in_progress",
  );
  const cur = doc.current_step;
  if (running.length !== 1 || !isInt(cur)) return;
  const want = keyOrder(running[0])[0];
  if (cur === want) return;
  if (isObject(doc[LEGACY]) && has(doc[LEGACY], "current_step")) {
    // the original is kept already (this cur was derived from it): only note the change
    ctx.note(`current_step ${cur} set to ${want}, the in-progress step`, "/current_step");
  } else {
    ctx.aside(
      doc,
      "current_step",
      cur,
      `current_step ${cur} contradicted the in-progress step ${running[0]}; set to ${want}`,
      "/current_step",
    );
  }
  doc.current_step = want;
}

/** Move step[name] to the step's x-legacy (name_2… when that slot holds another value).
 * @param {JsonObject} step
 * @param {string} key
 * @param {string} name
 * @param {Context} ctx
 * @param {string} why
 */
function move(step, key, name, ctx, why) {
  const legacy = legacyOf(step);
  let slot = name;
  for (let n = 2; has(legacy, slot) && !deepEqual(legacy[slot], step[name]); n++)
    slot = `${name}_${n}`;
  legacy[slot] = step[name];
  step[LEGACY] = legacy;
  step[name] = null;
  ctx.kept(
    `salvage: step ${key}: ${why}; ${name} kept as steps.${key}.${LEGACY}.${slot}`,
    pointer(["steps", key, name]),
  );
}

const set = (/** @type {JsonObject} */ step, /** @type {string} */ name) =>
  step[name] !== null && step[name] !== undefined;

/** One deterministic resolution per contradiction (docs/spec.md §9.4).
 * @param {JsonObject} doc @param {Workflow | null} wf @param {Context} ctx */
function salvage(doc, wf, ctx) {
  const steps = doc.steps;
  if (!isObject(steps)) return;
  const keys = orderedKeys(steps, wf).filter((k) => isObject(steps[k]));
  const running = keys.filter((k) => steps[k].status === "in_progress");
  for (const k of running.slice(0, -1)) {
    // SR306: the last in-progress step stays, earlier ones are pending
    const step = steps[k];
    step.status = "pending";
    step[LEGACY] = { ...legacyOf(step), status: "in_progress" };
    const why = `in progress with the later step ${running[running.length - 1]}; set to pending`;
    for (const name of ["started", "sub_step", "completed"])
      if (set(step, name)) move(step, k, name, ctx, why);
  }
  for (const k of keys) {
    const step = steps[k];
    const status = step.status;
    if (status === "pending") {
      // SR301
      for (const name of ["started", "completed", "sub_step"])
        if (set(step, name)) move(step, k, name, ctx, `pending with ${name} set`);
    } else if (status === "skipped" && set(step, "sub_step"))
      move(step, k, "sub_step", ctx, "skipped with a sub_step");
    else if (status === "in_progress" && set(step, "completed"))
      move(step, k, "completed", ctx, "in progress with a completion time");
    const started = parseTimestamp(step.started);
    const completed = parseTimestamp(step.completed);
    // SR304
    if (started !== null && completed !== null && started > completed)
      move(step, k, "started", ctx, `started after its completion ${step.completed}`);
  }
}
