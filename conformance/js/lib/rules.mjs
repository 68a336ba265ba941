// Semantic rules (spec §2.4) and workflow rules (spec §2.5) of a 3.0 state. They read the
// document defensively: it may have failed the schema too.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { isWithin, real } from "./files.mjs";
import { looksLikeTimestamp, parseTimestamp } from "./timeutil.mjs";

export const CORE_KEYS = new Set([
  "$schema",
  "schema_version",
  "project",
  "workflow",
  "revision",
  "updated",
  "current_step",
  "steps",
  "decisions",
  "open_findings",
  "decision_log",
  "review_audit",
]);
/**
 * @typedef {import("./types.js").JsonObject} JsonObject
 * @typedef {import("./types.js").Workflow} Workflow
 */
/**
 * What checkState needs besides the document: now (µs; null: no clock check), the clock skew
 * allowed (s; default DEFAULT_SKEW_SECONDS), the repository root listed artifacts are looked up
 * in (default the current directory, as the reference's) and the session directory (a bare
 * name is also looked up there; none: only in the root), whether to look, and whether step
 * times are compared with `updated` (default true).
 * @typedef {{now: number | null, skew?: number, root?: string | null, sessionDir?: string | null,
 *   checkArtifacts?: boolean, againstUpdated?: boolean}} RuleOptions
 */

/** The clock skew a timestamp may be ahead of now (the reference's RuleOptions: 5 minutes). */
export const DEFAULT_SKEW_SECONDS = 300;

const STEP_KEY = /^[0-9]+(_[0-9]+)?$/;
/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {unknown} v @returns {v is number} */
const isInt = (v) => typeof v === "number" && Number.isInteger(v);

/** @param {string} key @returns {[number, number]} */
export function keyOrder(key) {
  const [a, b] = key.split("_");
  return [Number(a), Number(b ?? 0)];
}

/** @param {string} a @param {string} b */
function byKey(a, b) {
  const [x1, y1] = keyOrder(a);
  const [x2, y2] = keyOrder(b);
  return x1 - x2 || y1 - y2;
}

/** Workflow order for the workflow's steps, then numeric order for the others.
 * @param {object} steps @param {Workflow | null} wf @returns {string[]}
 */
export function orderedKeys(steps, wf) {
  const keys = Object.keys(steps).filter((k) => STEP_KEY.test(k));
  if (wf && !wf.freeSteps) {
    const known = wf.stepKeys.filter((k) => k in steps);
    const extra = keys.filter((k) => !wf.stepKeys.includes(k)).sort(byKey);
    return [...known, ...extra];
  }
  return keys.sort(byKey);
}

/** POSIX normal form of a path (after turning backslashes into slashes).
 * @param {string} p
 */
export function normalize(p) {
  /** @type {string[]} */
  const out = [];
  const abs = p.startsWith("/");
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length && out[out.length - 1] !== "..") out.pop();
    else if (part === ".." && abs) continue;
    else out.push(part);
  }
  const s = (abs ? "/" : "") + out.join("/");
  return s || ".";
}

/** The code of an unsafe listed path, or null (lexical, spec §2.4).
 * @param {string} raw @returns {string | null}
 */
export function pathProblem(raw) {
  if (/[\x00-\x1f\x7f]/.test(raw)) return "SR312";
  if (raw.startsWith("/") || raw.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(raw)) return "SR310";
  const n = normalize(raw.replace(/\\/g, "/"));
  if (n === ".." || n.startsWith("../")) return "SR311";
  return null;
}

/** Whether a repository-relative artifact exists (a bare name is also looked up in the session
 * directory, when known); a path that resolves out of the root does not count.
 * @param {string} rel @param {string} root @param {string | null | undefined} sessionDir
 */
export function artifactExists(rel, root, sessionDir) {
  const rootReal = real(root) ?? root;
  const candidates = [join(root, rel)];
  // (a document checked on its own has no session directory: path.join threw a TypeError)
  if (!rel.includes("/") && typeof sessionDir === "string") candidates.push(join(sessionDir, rel));
  return candidates.some((c) => {
    const r = real(c);
    return r !== null && isWithin(r, rootReal) && existsSync(r);
  });
}

/**
 * Codes of the semantic and workflow rules. `opts`: {now (µs or null), skew (s), root,
 * sessionDir, checkArtifacts, againstUpdated (default true)}.

 * @param {JsonObject} doc @param {Workflow | null} wf @param {RuleOptions} opts
 * @returns {string[]}
 */
export function checkState(doc, wf, opts) {
  /** @type {string[]} */
  const out = [];
  /** @type {JsonObject} */
  const steps = isObject(doc.steps) ? doc.steps : {};
  const ts = (/** @type {unknown} */ v) => {
    if (v === null || v === undefined) return null;
    const t = parseTimestamp(v);
    if (t === null && looksLikeTimestamp(v)) out.push("SR340");
    return t;
  };
  // a caller that names no skew or root gets the reference's defaults (an undefined skew made
  // every limit NaN, so SR305 was never reported; an undefined root threw a TypeError)
  const skew = opts.skew ?? DEFAULT_SKEW_SECONDS;
  const root = opts.root ?? process.cwd();
  const future = (/** @type {number | null} */ t) => {
    if (t !== null && opts.now !== null && t > opts.now + skew * 1e6) out.push("SR305");
  };
  const updated = ts(doc.updated);
  future(updated);
  /** @type {string[]} */
  const running = [];
  for (const [key, step] of Object.entries(steps)) {
    if (!isObject(step)) continue;
    const status = step.status;
    const started = ts(step.started);
    const completed = ts(step.completed);
    const set = (/** @type {string} */ name) => step[name] !== null && step[name] !== undefined;
    if (status === "pending") {
      if (set("started") || set("completed") || set("sub_step")) out.push("SR301");
    } else if (status === "in_progress") {
      running.push(key);
      if (!set("started") || set("completed")) out.push("SR301");
    } else if (status === "complete") {
      if (!set("completed")) out.push("SR302");
      if (set("sub_step")) out.push("SR303");
    } else if (status === "skipped" && set("sub_step")) {
      out.push("SR301");
    }
    if (started !== null && completed !== null && started > completed) out.push("SR304");
    for (const t of [started, completed]) {
      // opts.againstUpdated false: `updated` is the migration time, so a later step time is a
      // question of the clock, not a contradiction of the file (docs/spec.md §9.4)
      if (t !== null && updated !== null && t > updated && opts.againstUpdated !== false)
        out.push("SR304");
      future(t);
    }
    for (const list of ["artifacts", "context_files_used"]) {
      const paths = step[list];
      if (!Array.isArray(paths)) continue;
      const seen = new Set();
      for (const p of paths) {
        if (typeof p !== "string") continue;
        const bad = pathProblem(p);
        if (bad) {
          out.push(bad);
          continue;
        }
        if (p.includes("\\")) out.push("SR315");
        const n = normalize(p.replace(/\\/g, "/"));
        if (seen.has(n)) out.push("SR313");
        seen.add(n);
        if (
          list === "artifacts" &&
          opts.checkArtifacts &&
          !artifactExists(n, root, opts.sessionDir)
        ) {
          out.push("SR314");
        }
      }
    }
  }
  if (running.length > 1) out.push("SR306");
  const cur = doc.current_step;
  if (
    running.length === 1 &&
    isInt(cur) &&
    STEP_KEY.test(running[0]) &&
    cur !== keyOrder(running[0])[0]
  ) {
    out.push("SR307");
  }
  // SR308: the latest started step (in workflow order) has an earlier step neither complete nor skipped
  const order = orderedKeys(steps, wf);
  let latest = -1;
  order.forEach((k, i) => {
    if (isObject(steps[k]) && ["in_progress", "complete"].includes(steps[k].status)) latest = i;
  });
  if (
    latest > 0 &&
    order
      .slice(0, latest)
      .some((k) => isObject(steps[k]) && !["complete", "skipped"].includes(steps[k].status))
  ) {
    out.push("SR308");
  }
  decisionLog(doc.decision_log, out);
  const fieldNames = new Set(wf ? wf.fields.map((f) => f.name) : []);
  for (const k of Object.keys(doc)) {
    if (!CORE_KEYS.has(k) && !fieldNames.has(k) && !k.startsWith("x-")) out.push("SR330");
  }
  if (wf) out.push(...checkWorkflow(doc, steps, wf));
  return out;
}

/** @param {unknown} log @param {string[]} out */
function decisionLog(log, out) {
  if (!Array.isArray(log)) return;
  const seen = new Set();
  let last = -1;
  for (const e of log) {
    if (!isObject(e) || typeof e.id !== "string") continue;
    const m = /^D([0-9]+)$/.exec(e.id);
    if (!m) continue;
    if (seen.has(e.id)) out.push("SR320");
    seen.add(e.id);
    const n = Number(m[1]);
    if (n <= last) out.push("SR321");
    last = Math.max(last, n);
  }
  for (const e of log) {
    if (isObject(e) && typeof e.superseded_by === "string" && !seen.has(e.superseded_by))
      out.push("SR322");
  }
}

/** @param {JsonObject} doc @param {JsonObject} steps @param {Workflow} wf @returns {string[]} */
function checkWorkflow(doc, steps, wf) {
  /** @type {string[]} */
  const out = [];
  if (!wf.freeSteps) {
    for (const key of Object.keys(steps)) if (!wf.step(key)) out.push("SR410");
    for (const k of wf.stepKeys) if (!(k in steps)) out.push("SR411");
  }
  for (const [key, step] of Object.entries(steps)) {
    const def = wf.step(key);
    if (!def || !isObject(step)) continue;
    if (typeof step.name === "string" && step.name !== def.name) out.push("SR412");
    if (typeof step.agent === "string" && step.agent !== "" && !def.agents.includes(step.agent))
      out.push("SR413");
    const sub = step.sub_step;
    if (typeof sub === "string" && def.checkpoints.length && !def.checkpoints.includes(sub)) {
      out.push(sub in def.legacy ? "SR416" : "SR414");
    }
    const ctx = step.context_files_used;
    if (def.budget && Array.isArray(ctx) && ctx.length > def.budget.max) out.push("SR415");
  }
  const audit = doc.review_audit;
  if (isObject(audit) && !wf.freeSteps) {
    for (const k of Object.keys(audit)) {
      const def = k.startsWith("step_") ? wf.step(k.slice(5)) : null;
      if (!def?.reviewed) out.push("SR421");
    }
  }
  if (!wf.fragment(doc)) out.push("SR420");
  return out;
}
