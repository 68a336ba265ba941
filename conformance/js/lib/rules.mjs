// Semantic rules (spec §2.4) and workflow rules (spec §2.5) of a 3.0 state. They read the
// document defensively: it may have failed the schema too.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { isWithin, real } from "./files.mjs";
import { Findings, found, pointerJoin, pyRepr } from "./findings.mjs";
import { keysOf } from "./jsonread.mjs";
import { explainErrors } from "./schema.mjs";
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
 * @typedef {import("./types.js").Found} Found
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
  return checkStateFound(doc, wf, opts).map((f) => f.code);
}

/**
 * The semantic and workflow rules' findings, each with the reference's words and the pointer
 * of its place (core/rules.py `check_state`, in its order; at most 100 of a code listed, the
 * rest counted).
 * @param {JsonObject} doc @param {Workflow | null} wf @param {RuleOptions} opts
 * @returns {Found[]}
 */
export function checkStateFound(doc, wf, opts) {
  const out = new Findings();
  /** @param {string} code @param {string} message @param {(string | number)[]} at
   * @param {string} [hint] */
  const add = (code, message, at, hint = "") =>
    out.push(found(code, message, pointerJoin(at), hint));
  /** @type {JsonObject} */
  const steps = isObject(doc.steps) ? doc.steps : {};
  const ts = (/** @type {unknown} */ v, /** @type {(string | number)[]} */ at) => {
    if (v === null || v === undefined) return null;
    const t = parseTimestamp(v);
    if (t === null && looksLikeTimestamp(v))
      add("SR340", `${pyRepr(v)} is not a real date and time`, at);
    return t;
  };
  // a caller that names no skew or root gets the reference's defaults (an undefined skew made
  // every limit NaN, so SR305 was never reported; an undefined root threw a TypeError)
  const skew = opts.skew ?? DEFAULT_SKEW_SECONDS;
  const root = opts.root ?? process.cwd();
  const future = (/** @type {number | null} */ t, /** @type {(string | number)[]} */ at) => {
    if (t !== null && opts.now !== null && t > opts.now + skew * 1e6) {
      const where = pointerJoin(at);
      add("SR305", `${where} is in the future (more than ${Math.trunc(skew)} s after now)`, at);
    }
  };
  const updated = ts(doc.updated, ["updated"]);
  future(updated, ["updated"]);
  /** @type {string[]} */
  const running = [];
  for (const key of keysOf(steps)) {
    const step = steps[key];
    if (!isObject(step)) continue;
    const base = ["steps", key];
    const status = step.status;
    const started = ts(step.started, [...base, "started"]);
    const completed = ts(step.completed, [...base, "completed"]);
    statusRules(status, step, key, add);
    if (status === "in_progress") running.push(key);
    if (started !== null && completed !== null && started > completed) {
      const msg = `step ${key}: started (${step.started}) is after completed (${step.completed})`;
      add("SR304", msg, [...base, "started"]);
    }
    for (const [name, t] of /** @type {[string, number | null][]} */ ([
      ["started", started],
      ["completed", completed],
    ])) {
      // opts.againstUpdated false: `updated` is the migration time, so a later step time is a
      // question of the clock, not a contradiction of the file (docs/spec.md §9.4)
      if (t !== null && updated !== null && t > updated && opts.againstUpdated !== false) {
        const msg = `step ${key}: ${name} (${step[name]}) is after the state's updated`;
        add("SR304", `${msg} (${doc.updated})`, [...base, name]);
      }
      future(t, [...base, name]);
    }
    for (const list of ["artifacts", "context_files_used"]) {
      const paths = step[list];
      if (!Array.isArray(paths)) continue;
      const seen = new Set();
      paths.forEach((p, i) => {
        if (typeof p !== "string") return;
        const at = [...base, list, i];
        const bad = pathProblem(p);
        if (bad) {
          add(bad, `${PATH_PROBLEMS[bad]}: ${pyRepr(p)}`, at);
          return;
        }
        if (p.includes("\\")) add("SR315", `path uses backslashes: ${pyRepr(p)}`, at);
        const n = normalize(p.replace(/\\/g, "/"));
        if (seen.has(n)) add("SR313", `${pyRepr(p)} is listed twice`, at);
        seen.add(n);
        if (
          list === "artifacts" &&
          opts.checkArtifacts &&
          !artifactExists(n, root, opts.sessionDir)
        ) {
          add("SR314", `artifact ${pyRepr(p)} does not exist`, at);
        }
      });
    }
  }
  if (running.length > 1)
    add("SR306", `steps ${running.join(", ")} are all in_progress`, ["steps"]);
  const cur = doc.current_step;
  if (
    running.length === 1 &&
    isInt(cur) &&
    STEP_KEY.test(running[0]) &&
    cur !== keyOrder(running[0])[0]
  ) {
    const want = keyOrder(running[0])[0];
    const msg = `current_step is ${cur} but step ${running[0]} is in_progress (expected ${want})`;
    add("SR307", msg, ["current_step"]);
  }
  // SR308: the latest started step (in workflow order) has an earlier step neither complete nor skipped
  const order = orderedKeys(steps, wf);
  let latest = -1;
  order.forEach((k, i) => {
    if (isObject(steps[k]) && ["in_progress", "complete"].includes(steps[k].status)) latest = i;
  });
  if (latest > 0) {
    const behind = order
      .slice(0, latest)
      .filter((k) => isObject(steps[k]) && !["complete", "skipped"].includes(steps[k].status));
    if (behind.length) {
      const msg = `earlier step(s) ${behind.join(", ")} are neither complete nor skipped`;
      add("SR308", `step ${order[latest]} has started but ${msg}`, ["steps", order[latest]]);
    }
  }
  decisionLog(doc.decision_log, add);
  const fieldNames = new Set(wf ? wf.fields.map((f) => f.name) : []);
  for (const k of keysOf(doc)) {
    if (!CORE_KEYS.has(k) && !fieldNames.has(k) && !k.startsWith("x-"))
      add("SR330", `unknown top-level key ${pyRepr(k)}`, [k]);
  }
  if (wf) for (const f of checkWorkflow(doc, steps, wf)) out.push(f);
  return out.listed();
}

/** @typedef {(code: string, message: string, at: (string | number)[], hint?: string) => void} Add */

/** Why a listed path is unsafe (the reference's `path_problem`). @type {Record<string, string>} */
const PATH_PROBLEMS = {
  SR312: "path holds a control character",
  SR310: "path is absolute",
  SR311: "path leaves the repository",
};

/** The rules of a step's status (core/rules.py `_status_rules`).
 * @param {unknown} status @param {JsonObject} step @param {string} key @param {Add} add */
function statusRules(status, step, key, add) {
  const base = ["steps", key];
  const set = (/** @type {string} */ name) => step[name] !== null && step[name] !== undefined;
  const sub = step.sub_step;
  if (status === "pending") {
    for (const name of ["started", "completed", "sub_step"]) {
      if (set(name))
        add(
          "SR301",
          `step ${key} is pending but has ${name} set`,
          [...base, name],
          `A pending step has no \`${name}\`: set it to null, or set the status the value implies.`,
        );
    }
  } else if (status === "in_progress") {
    if (!set("started"))
      add(
        "SR301",
        `step ${key} is in_progress but has no started time`,
        [...base, "started"],
        "Set `started` to when the step started (an RFC 3339 UTC timestamp).",
      );
    if (set("completed"))
      add(
        "SR301",
        `step ${key} is in_progress but has a completed time`,
        [...base, "completed"],
        "Set `completed` to null, or the status to complete if it finished.",
      );
  } else if (status === "complete") {
    if (!set("completed"))
      add("SR302", `step ${key} is complete but completed is not set`, [...base, "completed"]);
    if (set("sub_step"))
      add("SR303", `step ${key} is complete but sub_step is ${pyRepr(sub)}`, [...base, "sub_step"]);
  } else if (status === "skipped" && set("sub_step")) {
    add(
      "SR301",
      `step ${key} is skipped but has sub_step ${pyRepr(sub)}`,
      [...base, "sub_step"],
      "Set `sub_step` to null: a skipped step records no checkpoint.",
    );
  }
}

/** @param {unknown} log @param {Add} add */
function decisionLog(log, add) {
  if (!Array.isArray(log)) return;
  const seen = new Set();
  let last = -1;
  log.forEach((e, i) => {
    if (!isObject(e) || typeof e.id !== "string") return;
    const m = /^D([0-9]+)$/.exec(e.id);
    if (!m) return;
    const at = ["decision_log", i, "id"];
    if (seen.has(e.id)) add("SR320", `decision id ${e.id} is used twice`, at);
    seen.add(e.id);
    const n = Number(m[1]);
    if (n <= last) add("SR321", `decision id ${e.id} comes after a higher id`, at);
    last = Math.max(last, n);
  });
  log.forEach((e, i) => {
    if (isObject(e) && typeof e.superseded_by === "string" && !seen.has(e.superseded_by))
      add("SR322", `superseded_by ${e.superseded_by} is not in the log`, [
        "decision_log",
        i,
        "superseded_by",
      ]);
  });
}

/** @param {JsonObject} doc @param {JsonObject} steps @param {Workflow} wf @returns {Found[]} */
function checkWorkflow(doc, steps, wf) {
  /** @type {Found[]} */
  const out = [];
  /** @type {Add} */
  const add = (code, message, at, hint = "") => {
    out.push(found(code, message, pointerJoin(at), hint));
  };
  const id = pyRepr(wf.id);
  if (!wf.freeSteps) {
    for (const key of keysOf(steps)) {
      if (!wf.step(key)) {
        const msg = `is not a step of workflow ${id} (steps: ${wf.stepKeys.join(", ")})`;
        add("SR410", `step ${pyRepr(key)} ${msg}`, ["steps", key]);
      }
    }
    for (const k of wf.stepKeys) {
      if (!(k in steps)) {
        const name = wf.step(k)?.name;
        add("SR411", `step ${k} (${name}) of workflow ${id} is missing`, ["steps"]);
      }
    }
  }
  for (const key of keysOf(steps)) {
    const step = steps[key];
    const def = wf.step(key);
    if (!def || !isObject(step)) continue;
    const base = ["steps", key];
    if (typeof step.name === "string" && step.name !== def.name) {
      const msg = `step ${key} is named ${pyRepr(step.name)}; workflow ${id} calls it ${pyRepr(def.name)}`;
      add("SR412", msg, [...base, "name"]);
    }
    if (typeof step.agent === "string" && step.agent !== "" && !def.agents.includes(step.agent)) {
      const msg = `step ${key} agent ${pyRepr(step.agent)} is not one of ${def.agents.join(", ")}`;
      add("SR413", msg, [...base, "agent"]);
    }
    const sub = step.sub_step;
    if (typeof sub === "string" && def.checkpoints.length && !def.checkpoints.includes(sub)) {
      if (Object.hasOwn(def.legacy, sub)) {
        const msg = `is the legacy name of ${pyRepr(def.legacy[sub])}`;
        add("SR416", `step ${key} sub_step ${pyRepr(sub)} ${msg}`, [...base, "sub_step"]);
      } else {
        const of = `${def.name}; checkpoints: ${def.checkpoints.join(", ")}`;
        add("SR414", `step ${key} sub_step ${pyRepr(sub)} is not a checkpoint of ${of}`, [
          ...base,
          "sub_step",
        ]);
      }
    }
    const ctx = step.context_files_used;
    if (def.budget && Array.isArray(ctx) && ctx.length > def.budget.max) {
      const msg = `step ${key} recorded ${ctx.length} context files; its startup budget is ${def.budget.max}`;
      add("SR415", msg, [...base, "context_files_used"]);
    }
  }
  const audit = doc.review_audit;
  if (isObject(audit) && !wf.freeSteps) {
    for (const k of keysOf(audit)) {
      const def = k.startsWith("step_") ? wf.step(k.slice(5)) : null;
      if (!def?.reviewed) {
        const msg = `review_audit has ${pyRepr(k)} but workflow ${id} does not review that step`;
        add("SR421", msg, ["review_audit", k]);
      }
    }
  }
  if (!wf.fragment(doc)) out.push(...explainErrors(wf.fragment.errors, { override: "SR420" }));
  return out;
}
