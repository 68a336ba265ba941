// State transitions at the five write moments (spec §4), pure: no I/O, the clock given. Each
// takes a current-version state and returns a new document (the input is never changed), or
// throws a TransitionError whose diagnostics say what to do: SR710 (not allowed from the
// step's status), SR711 (no such step), SR310/SR311/SR312 (an unsafe listed path), SR420 (a
// decision value the workflow does not allow), SR422 (a decision key it does not define).
// `updated` and `revision` are the store's.
// They follow the reference's transitions one for one (docs/spec.md §4, the write moments).

import { keyOrder, normalize, orderedKeys, pathProblem } from "./rules.mjs";
import { formatTimestamp, parseTimestamp } from "./timeutil.mjs";
import { getCloseMatches } from "./difflib.mjs";
import { pyJson, pyRepr, shellQuote } from "./findings.mjs";

const STEP_KEY = /^[0-9]+(_[0-9]+)?$/;
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const DECISION_ID = /^D([0-9]+)$/;
const DONE = ["complete", "skipped"];

/**
 * @typedef {import("./types.js").Diagnostic} Problem
 * @typedef {import("./types.js").StateDocument} StateDocument
 */
/**
 * @typedef {import("./types.js").JsonObject} JsonObject
 * @typedef {import("./types.js").Workflow} Workflow
 */
/** @typedef {import("./types.js").StepDef} StepDef */

export class TransitionError extends Error {
  /** @param {Problem[]} problems */
  constructor(problems) {
    super(problems.map((p) => `${p.code} ${p.message}`).join("; "));
    this.problems = problems;
    this.codes = problems.map((p) => p.code);
  }
}

/** @param {string} code @param {string} message @param {string} [pointer] */
const refuse = (code, message, pointer = "") => new TransitionError([{ code, message, pointer }]);
const esc = (/** @type {string} */ s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const ptr = (/** @type {string[]} */ ...parts) => parts.map((p) => `/${esc(String(p))}`).join("");
/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {StateDocument} v */
const clone = (v) => structuredClone(v);
const isInt = (/** @type {unknown} */ v) => typeof v === "number" && Number.isInteger(v);
// values quoted as the reference's messages quote them (Python's repr())
const repr = (/** @type {unknown} */ v) => pyRepr(v);

/** @param {string} key @param {JsonObject | undefined} step @param {StepDef | null} sdef */
function label(key, step, sdef) {
  const name = sdef ? sdef.name : step?.name;
  return typeof name === "string" && name ? `${key} (${name})` : key;
}

/** @param {StateDocument} doc */
function stepsOf(doc) {
  if (!isObject(doc.steps)) doc.steps = {};
  return doc.steps;
}

/** @param {Workflow} wf @param {string} key */
function checkKey(wf, key) {
  if (typeof key !== "string" || !STEP_KEY.test(key)) {
    throw refuse(
      "SR711",
      `${repr(key)} is not a step key (digits, optionally \`_\` and digits, e.g. 1 or 3_5)`,
    );
  }
  if (!wf.freeSteps && wf.step(key) === null) {
    throw refuse(
      "SR711",
      `step ${repr(key)} is not a step of workflow ${repr(wf.id)} (steps: ${wf.stepKeys.join(", ")})`,
      ptr("steps", key),
    );
  }
}

/** @param {string} name @param {string} agent */
const newStep = (name, agent) => ({
  name,
  agent,
  status: "pending",
  sub_step: null,
  started: null,
  completed: null,
  artifacts: [],
  context_files_used: [],
});

/** @param {StepDef} sdef */
const agentOf = (sdef) => (sdef.agents.length === 1 ? sdef.agents[0] : "");

/**
 * The step record to change (a workflow step missing from the document is added).
 * @param {StateDocument} doc
 * @param {Workflow} wf
 * @param {string} key
 */
function existing(doc, wf, key) {
  checkKey(wf, key);
  const steps = stepsOf(doc);
  if (isObject(steps[key])) return steps[key];
  const sdef = wf.step(key);
  if (sdef === null) {
    throw refuse(
      "SR711",
      `step ${repr(key)} is not in the state yet; start it first (\`session-resume start ${key} --name NAME\`)`,
      ptr("steps", key),
    );
  }
  steps[key] = newStep(sdef.name, agentOf(sdef));
  return steps[key];
}

/** @param {Iterable<string>} paths @param {string} pointer */
function checkPaths(paths, pointer) {
  const out = [];
  /** @type {Problem[]} */
  const problems = [];
  for (const raw of paths) {
    if (typeof raw !== "string" || !raw) {
      problems.push({ code: "SR710", message: "a listed path is empty", pointer });
      continue;
    }
    const bad = pathProblem(raw);
    if (bad) {
      problems.push({
        code: bad,
        message: `unsafe path ${repr(raw)}; list files as paths relative to the repository root, inside it`,
        pointer,
      });
      continue;
    }
    out.push(raw);
  }
  if (problems.length) throw new TransitionError(problems);
  return out;
}

/**
 * A listed path in its one stored form (spec §4; the reference's `one_form`): normalised, and a
 * bare file name resolved against the session directory `base` (repository-relative).
 * @param {string} path @param {string | null} base
 */
export function oneForm(path, base) {
  const p = path && !path.startsWith("/") ? normalize(path) : path;
  if (base !== null && base !== "" && base !== "." && !p.includes("/") && p !== "." && p !== "..")
    return `${base}/${p}`;
  return p;
}

/** `target` (a step's listed paths) in the one form, each once, in order.
 * @param {unknown[]} target @param {string} base */
function oneFormList(target, base) {
  const seen = new Set();
  const out = [];
  for (let p of target) {
    if (typeof p === "string") {
      p = oneForm(p, base);
      if (seen.has(p)) continue;
      seen.add(p);
    }
    out.push(p);
  }
  target.splice(0, target.length, ...out);
}

/** @param {unknown[]} target @param {string[]} values */
function appendUnique(target, values) {
  const seen = new Set(
    target.filter((p) => typeof p === "string").map((p) => normalize(p.replace(/\\/g, "/"))),
  );
  for (const p of values) {
    const n = normalize(p.replace(/\\/g, "/"));
    if (!seen.has(n)) {
      target.push(p);
      seen.add(n);
    }
  }
}

/**
 * A fresh state for `wf`: every step pending, revision 0 (the store makes it 1).
 * @param {Workflow} wf @param {string} project @param {number} now microseconds since the epoch
 * @param {(wf: Workflow, project: string, now: string) => StateDocument} templateState
 *   workflow.mjs's
 * @returns {StateDocument}
 */
export function initState(wf, project, now, templateState) {
  if (typeof project !== "string" || !PROJECT.test(project)) {
    throw refuse(
      "SR710",
      `project name ${repr(project)} is not allowed: use letters, digits, \`.\`, \`_\` and \`-\`, starting with a letter or digit (at most 128 characters)`,
      "/project",
    );
  }
  return templateState(wf, project, formatTimestamp(now));
}

/**
 * Step start: pending → in_progress (see the reference for the rules on restart, re-run,
 * another step in progress and earlier steps not done).
 * @param {StateDocument} doc @param {Workflow} wf @param {string} key @param {number} now
 * @param {{force?: boolean, orphaned?: boolean, name?: string|null}} [opts]
 */
export function start(doc, wf, key, now, { force = false, orphaned = false, name = null } = {}) {
  const out = clone(doc);
  checkKey(wf, key);
  const steps = stepsOf(out);
  const sdef = wf.step(key);
  if (!isObject(steps[key]))
    steps[key] = sdef ? newStep(sdef.name, agentOf(sdef)) : newStep(name || `Step ${key}`, "");
  const step = steps[key];
  const status = step.status;
  const lbl = label(key, step, sdef);
  const sptr = ptr("steps", key, "status");
  if (DONE.includes(status) && !force) {
    if (status === "complete") {
      throw refuse(
        "SR710",
        `step ${lbl} is already complete; to run it again use \`session-resume start ${key} --force\` (its completion is reset)`,
        sptr,
      );
    }
    const reason = step.skip_reason;
    throw refuse(
      "SR710",
      `step ${lbl} was skipped${typeof reason === "string" && reason ? ` (${reason})` : ""}; to run it anyway use \`session-resume start ${key} --force\``,
      sptr,
    );
  }
  const others = Object.keys(steps).filter(
    (k) => k !== key && isObject(steps[k]) && steps[k].status === "in_progress",
  );
  if (others.length && !force) {
    const names = others.map((k) => label(k, steps[k], wf.step(k))).join(", ");
    throw refuse(
      "SR710",
      `step ${names} is in progress; complete it (\`session-resume complete ${others[0]}\`) or skip it first, or use \`--force\` to start step ${key} anyway (step ${others[0]} then goes back to pending)`,
      ptr("steps", others[0], "status"),
    );
  }
  const order = orderedKeys(steps, wf);
  const behind = order.includes(key)
    ? order
        .slice(0, order.indexOf(key))
        .filter((k) => isObject(steps[k]) && !DONE.includes(steps[k].status))
    : [];
  if (behind.length && !force && status !== "in_progress") {
    const names = behind.map((k) => label(k, steps[k], wf.step(k))).join(", ");
    throw refuse(
      "SR710",
      `earlier step(s) ${names} are neither complete nor skipped; complete or skip them first (the orchestrator runs steps in order), or use \`--force\` to start step ${key} anyway`,
      ptr("steps", key),
    );
  }
  for (const k of others)
    Object.assign(steps[k], { status: "pending", started: null, completed: null, sub_step: null });
  const attempts = isInt(step.attempts) ? step.attempts : null;
  if (status === "pending") step.attempts = (attempts ?? 0) + 1;
  else if (status === "in_progress") {
    if (orphaned) step.attempts = (attempts ?? 1) + 1;
  } else step.attempts = (attempts ?? 1) + 1;
  if (status !== "pending") step.context_files_used = [];
  delete step.skip_reason;
  Object.assign(step, {
    status: "in_progress",
    started: formatTimestamp(now),
    completed: null,
    sub_step: null,
  });
  out.current_step = keyOrder(key)[0];
  return out;
}

/**
 * Sub-step done: record the checkpoint and append artifacts and context files (deduplicated).
 * @param {StateDocument} doc @param {Workflow} wf @param {string} key @param {string} subStep
 * @param {{artifacts?: string[], contextFiles?: string[], base?: string | null}} [opts] `base`:
 *   the session directory relative to the repository (every listed path then in its one form)
 */
export function checkpoint(
  doc,
  wf,
  key,
  subStep,
  { artifacts = [], contextFiles = [], base = null } = {},
) {
  const out = clone(doc);
  const step = existing(out, wf, key);
  const sdef = wf.step(key);
  const lbl = label(key, step, sdef);
  const status = step.status;
  if (status !== "in_progress") {
    const advice =
      status === "pending"
        ? `run \`session-resume start ${key}\` before recording checkpoints`
        : `it is ${status}; run \`session-resume start ${key} --force\` to work on it again`;
    throw refuse(
      "SR710",
      `step ${lbl} is ${status}, not in_progress: ${advice}`,
      ptr("steps", key),
    );
  }
  if (typeof subStep !== "string" || !subStep.trim())
    throw refuse("SR710", "the checkpoint id is empty", ptr("steps", key, "sub_step"));
  let sub = subStep;
  if (sdef?.checkpoints.length && !sdef.checkpoints.includes(sub)) {
    if (Object.hasOwn(sdef.legacy, sub)) sub = sdef.legacy[sub];
    else {
      throw refuse(
        "SR710",
        `${repr(sub)} is not a checkpoint of step ${lbl} in workflow ${repr(wf.id)}; valid ids: ${sdef.checkpoints.join(", ")}`,
        ptr("steps", key, "sub_step"),
      );
    }
  }
  const arts = checkPaths(artifacts, ptr("steps", key, "artifacts"));
  const ctx = checkPaths(contextFiles, ptr("steps", key, "context_files_used"));
  for (let [list, values] of /** @type {[string, string[]][]} */ ([
    ["artifacts", arts],
    ["context_files_used", ctx],
  ])) {
    if (!Array.isArray(step[list])) step[list] = [];
    if (base !== null) {
      oneFormList(step[list], base);
      values = values.map((v) => oneForm(v, base));
    }
    appendUnique(step[list], values);
  }
  step.sub_step = sub;
  return out;
}

/**
 * Step done: in_progress → complete.
 * @param {StateDocument} doc
 * @param {Workflow} wf
 * @param {string} key
 * @param {number} now
 */
export function complete(doc, wf, key, now) {
  const out = clone(doc);
  const step = existing(out, wf, key);
  const lbl = label(key, step, wf.step(key));
  const status = step.status;
  const sptr = ptr("steps", key, "status");
  if (status === "pending")
    throw refuse(
      "SR710",
      `step ${lbl} is pending: it has not started; run \`session-resume start ${key}\` first`,
      sptr,
    );
  if (status === "complete")
    throw refuse(
      "SR710",
      `step ${lbl} is already complete (at ${step.completed}); nothing to do`,
      sptr,
    );
  if (status !== "in_progress")
    throw refuse(
      "SR710",
      `step ${lbl} is ${status}; only a step in progress can be completed (\`session-resume start ${key} --force\` to run it)`,
      sptr,
    );
  Object.assign(step, { status: "complete", completed: formatTimestamp(now), sub_step: null });
  return out;
}

/**
 * pending or in_progress → skipped.
 * @param {StateDocument} doc
 * @param {Workflow} wf
 * @param {string} key
 * @param {string} reason
 * @param {{force?: boolean}} [opts]
 */
export function skip(doc, wf, key, reason, { force = false } = {}) {
  const out = clone(doc);
  const step = existing(out, wf, key);
  const sdef = wf.step(key);
  const lbl = label(key, step, sdef);
  const status = step.status;
  const sptr = ptr("steps", key, "status");
  if (typeof reason !== "string" || !reason.trim())
    throw refuse("SR710", `give the reason for skipping step ${lbl} (--reason)`, sptr);
  if (status !== "pending" && status !== "in_progress")
    throw refuse(
      "SR710",
      `step ${lbl} is ${status}; only a pending or in-progress step can be skipped`,
      sptr,
    );
  if (sdef && !sdef.optional && !force)
    throw refuse(
      "SR710",
      `step ${lbl} is not optional in workflow ${repr(wf.id)}; use \`--force\` to skip it anyway`,
      sptr,
    );
  Object.assign(step, { status: "skipped", sub_step: null, completed: null, skip_reason: reason });
  return out;
}

/**
 * Decision made: decisions[key] = value (checked against the workflow's keys and enum).
 * @param {StateDocument} doc
 * @param {Workflow} wf
 * @param {string} key
 * @param {unknown} value
 * @param {"decide" | "transition" | "approve"} [via] the command a refusal's hint names
 */
export function setDecision(doc, wf, key, value, via = "decide") {
  if (typeof key !== "string" || !key)
    throw refuse("SR710", "the decision key is empty", "/decisions");
  // A workflow that lists its decision keys accepts only those (SR422); one with none, any key.
  if (wf.decisions.length > 0 && !wf.decisions.some((d) => d.key === key))
    throw new TransitionError([unknownDecisionKey(wf, key, value, via)]);
  for (const d of wf.decisions) {
    if (
      d.key === key &&
      d.enum !== undefined &&
      !d.enum.some((/** @type {unknown} */ e) => e === value)
    ) {
      throw refuse(
        "SR420",
        `decision ${key} = ${repr(value)} is not allowed by workflow ${repr(wf.id)}; allowed: ${d.enum.map(repr).join(", ")}`,
        ptr("decisions", key),
      );
    }
  }
  const out = clone(doc);
  if (!isObject(out.decisions)) out.decisions = {};
  out.decisions[key] = value;
  for (const f of wf.fields) if (f.name === key && key in out) out[key] = value;
  return out;
}

/**
 * SR422: `key` is not one of the decision keys `wf` defines. The hint names the nearest key
 * (Python's difflib.get_close_matches, n=1, cutoff=0.6) in the command that sets it, or the
 * keys when none is near: the reference's `unknown_decision_key`, word for word.
 * @param {Workflow} wf @param {string} key @param {unknown} value
 * @param {"decide" | "transition" | "approve"} via @returns {Problem & {hint: string}}
 */
function unknownDecisionKey(wf, key, value, via) {
  const keys = wf.decisions.map((d) => d.key);
  const near = getCloseMatches(key, keys, 1, 0.6);
  let message = `decision key ${repr(key)} is not defined by workflow ${repr(wf.id)}; its keys: ${keys.join(", ")}`;
  const shown = typeof value === "string" ? value : pyJson(value);
  let hint;
  if (near.length) {
    message += `; did you mean ${repr(near[0])}?`;
    hint =
      via === "transition" || via === "approve"
        ? `Pass \`--decision ${shellQuote(`${near[0]}=${shown}`)}\` instead.`
        : `Run \`session-resume decide ${near[0]} ${shellQuote(shown)}\`.`;
  } else {
    hint =
      `Use one of the decision keys of workflow ${repr(wf.id)} (${keys.join(", ")}); a ` +
      "decision outside them goes in the decision log: `session-resume decide --log " +
      "--title T --choice C --rationale R`.";
  }
  return { code: "SR422", message, pointer: ptr("decisions", key), hint };
}

/** @param {StateDocument} doc */
export function nextDecisionId(doc) {
  let highest = 0;
  if (Array.isArray(doc.decision_log)) {
    for (const e of doc.decision_log) {
      if (isObject(e) && typeof e.id === "string") {
        const m = DECISION_ID.exec(e.id);
        if (m) highest = Math.max(highest, Number(m[1]));
      }
    }
  }
  return `D${String(highest + 1).padStart(3, "0")}`;
}

/**
 * Append a decision to decision_log with the next id (D001, ...).
 * @param {StateDocument} doc
 * @param {{title: string, choice: string, rationale: string, step?: string|null, alternatives?: string[]}} entry
 * @param {number} now @param {Workflow | null} [wf]
 */
export function logDecision(
  doc,
  { title, choice, rationale, step = null, alternatives = [] },
  now,
  wf = null,
) {
  for (const [what, value] of /** @type {[string, unknown][]} */ ([
    ["title", title],
    ["choice", choice],
    ["rationale", rationale],
  ])) {
    if (typeof value !== "string" || !value.trim())
      throw refuse("SR710", `the decision's ${what} is empty`, "/decision_log");
  }
  /** @type {Record<string, unknown>} */
  const entry = { id: nextDecisionId(doc), title, choice, rationale };
  if (step !== null) {
    if (wf) checkKey(wf, step);
    else if (!STEP_KEY.test(step))
      throw refuse("SR711", `${repr(step)} is not a step key`, "/decision_log");
    entry.step = /^[0-9]+$/.test(step) ? Number(step) : step;
  }
  if (alternatives.length) entry.alternatives = [...alternatives];
  entry.timestamp = formatTimestamp(now);
  const out = clone(doc);
  if (!Array.isArray(out.decision_log)) out.decision_log = [];
  out.decision_log.push(entry);
  return out;
}

/**
 * Challenger finding: add `title` to open_findings (once).
 * @param {StateDocument} doc
 * @param {string} title
 */
export function addFinding(doc, title) {
  if (typeof title !== "string" || !title.trim())
    throw refuse("SR710", "the finding title is empty", "/open_findings");
  const out = clone(doc);
  if (!Array.isArray(out.open_findings)) out.open_findings = [];
  if (!out.open_findings.includes(title)) out.open_findings.push(title);
  return out;
}

/**
 * Remove `title` from open_findings; refused when it is not open.
 * @param {StateDocument} doc
 * @param {string} title
 */
export function resolveFinding(doc, title) {
  const findings = doc.open_findings;
  if (!Array.isArray(findings) || !findings.includes(title)) {
    const listed = Array.isArray(findings) ? findings.map(repr).join(", ") : "";
    throw refuse(
      "SR710",
      `no open finding titled ${repr(title)}; open findings: ${listed || "none"}`,
      "/open_findings",
    );
  }
  const out = clone(doc);
  out.open_findings = out.open_findings.filter((/** @type {unknown} */ f) => f !== title);
  return out;
}

/**
 * One `review-audit` write: the fields given are set (complexity, pass counts) or appended,
 * deduplicated (models, skipped pass numbers, skip reasons).
 * @typedef {{complexity?: string|null, passesPlanned?: number|null, passesExecuted?: number|null,
 *   models?: string[], skipped?: number[], skipReasons?: string[]}} ReviewAudit
 */

/**
 * Review audit recorded: `review_audit.step_<key>` (spec §4), checked against the workflow:
 * the step must be review-audited, the complexity one of the workflow's `complexity` values,
 * the counts 0 or more, a skipped pass within the passes planned, no more passes run than
 * planned with the skipped ones, and a reason for skipped passes (the reference's
 * `review_audit`, word for word).
 * @param {StateDocument} doc @param {Workflow} wf @param {string} key @param {ReviewAudit} audit
 */
export function reviewAudit(doc, wf, key, audit) {
  const out = clone(doc);
  existing(out, wf, key); // refuses a step unknown to the state and the workflow
  const sdef = wf.step(key);
  const at = ptr("review_audit", `step_${key}`);
  if (!wf.freeSteps && !sdef?.reviewed) {
    const audited = wf.steps.filter((s) => s.reviewed).map((s) => s.key);
    throw refuse(
      "SR710",
      `step ${key} has no challenger review in workflow ${repr(wf.id)} (review-audited steps: ${audited.join(", ") || "none"}); nothing was written`,
      at,
    );
  }
  const complexity = audit.complexity ?? null;
  if (complexity !== null) {
    const allowed = wf.decisions.find((d) => d.key === "complexity")?.enum;
    if (Array.isArray(allowed) && !allowed.includes(complexity))
      throw refuse(
        "SR420",
        `complexity ${repr(complexity)} is not allowed by workflow ${repr(wf.id)}; allowed: ${allowed
          .filter((v) => v)
          .map(repr)
          .join(", ")}`,
        `${at}/complexity`,
      );
  }
  const counts = { passes_planned: audit.passesPlanned, passes_executed: audit.passesExecuted };
  for (const [name, value] of Object.entries(counts))
    if (value !== null && value !== undefined && value < 0)
      throw refuse("SR710", `${name} must be 0 or more, not ${value}`, `${at}/${name}`);
  if (!isObject(out.review_audit)) out.review_audit = {};
  const audits = out.review_audit;
  if (!isObject(audits[`step_${key}`]))
    audits[`step_${key}`] = {
      complexity: "",
      passes_planned: 0,
      passes_executed: 0,
      skipped: [],
      skip_reasons: [],
      models_used: [],
    };
  const entry = audits[`step_${key}`];
  if (complexity !== null) entry.complexity = complexity;
  for (const [name, value] of Object.entries(counts))
    if (value !== null && value !== undefined) entry[name] = value;
  /** @type {[string, unknown[]][]} */
  const appended = [
    ["models_used", audit.models ?? []],
    ["skipped", audit.skipped ?? []],
    ["skip_reasons", audit.skipReasons ?? []],
  ];
  for (const [name, values] of appended) {
    const target = Array.isArray(entry[name]) ? entry[name] : [];
    entry[name] = [...target, ...values.filter((v) => !target.includes(v))];
  }
  const planned = isInt(entry.passes_planned) ? entry.passes_planned : null;
  const bad = entry.skipped.filter(
    (/** @type {any} */ n) => !isInt(n) || n < 1 || (planned !== null && n > planned),
  );
  if (bad.length)
    throw refuse(
      "SR710",
      `skipped pass ${repr(bad[0])} is not a pass of the ${repr(planned)} planned (1..${repr(planned)})`,
      `${at}/skipped`,
    );
  const executed = isInt(entry.passes_executed) ? entry.passes_executed : null;
  if (planned !== null && executed !== null && executed + entry.skipped.length > planned)
    throw refuse(
      "SR710",
      `${executed} passes run and ${entry.skipped.length} skipped exceed the ${planned} planned; raise --passes-planned or correct the counts`,
      at,
    );
  if (entry.skipped.length && entry.skip_reasons.length < 1)
    throw refuse(
      "SR710",
      'skipped passes need a reason (`--skip-reason TEXT`, e.g. "pass 1: 0 must_fix")',
      `${at}/skip_reasons`,
    );
  return out;
}

/**
 * An orchestrator gate in one document: complete A, record decisions, start B.
 * @param {StateDocument} doc
 * @param {Workflow} wf
 * @param {string} completeKey
 * @param {string} startKey
 * @param {Record<string, unknown>} decisions @param {number} now @param {{force?: boolean}} [opts]
 */
export function transition(doc, wf, completeKey, startKey, decisions, now, { force = false } = {}) {
  let out = complete(doc, wf, completeKey, now);
  for (const [k, v] of Object.entries(decisions)) out = setDecision(out, wf, k, v, "transition");
  const gate = wf.step(completeKey)?.gate;
  if (isObject(gate) && typeof gate.id === "string" && !gateApproval(out, completeKey)) {
    // passing a gate is its approval (docs/spec.md §4.1)
    if (!Array.isArray(out.decision_log)) out.decision_log = [];
    out.decision_log.push(approvalEntry(out, gate.id, completeKey, decisions, now));
  }
  return start(out, wf, startKey, now, { force });
}

export const APPROVED = "approved";

/**
 * The decision_log entry recording the user's approval of step `key`'s gate (docs/spec.md
 * §4.1), or null: the last entry whose choice is `approved` and whose step is `key` (a string
 * or an integer), unless both it and the step carry a time and the entry's is earlier than the
 * step's `started`. The reference's `gate_approval`.
 * @param {StateDocument} doc @param {string} key @returns {JsonObject | null}
 */
export function gateApproval(doc, key) {
  const log = Array.isArray(doc.decision_log) ? doc.decision_log : [];
  const steps = isObject(doc.steps) ? doc.steps : {};
  const step = isObject(steps[key]) ? steps[key] : null;
  const started = step ? step.started : null;
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i];
    if (!isObject(e) || e.choice !== APPROVED) continue;
    const at = e.step;
    if (typeof at === "boolean" || at === null || at === undefined || String(at) !== key) continue;
    if (typeof e.timestamp === "string" && typeof started === "string") {
      const a = parseTimestamp(e.timestamp);
      const b = parseTimestamp(started);
      if (a !== null && b !== null && a < b) continue;
    }
    return e;
  }
  return null;
}

/**
 * The approval entry (docs/spec.md §4.1).
 * @param {StateDocument} doc @param {string} gateId @param {string} key
 * @param {Record<string, unknown>} decisions @param {number} now
 */
function approvalEntry(doc, gateId, key, decisions, now) {
  const given = Object.entries(decisions)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : pyJson(v)}`)
    .join(", ");
  return {
    id: nextDecisionId(doc),
    title: `${gateId} approval`,
    choice: APPROVED,
    rationale: `the user approved ${gateId} of step ${key}${given ? ` with ${given}` : ""}`,
    step: /^[0-9]+$/.test(key) ? Number(key) : key,
    agent: "user",
    gate: gateId,
    decisions: { ...decisions },
    timestamp: formatTimestamp(now),
  };
}

/**
 * The user approved the gate of complete step `key`, with `decisions` (docs/spec.md §4.1).
 * @param {StateDocument} doc @param {Workflow} wf @param {string} key
 * @param {Record<string, unknown>} decisions @param {number} now
 */
export function approveGate(doc, wf, key, decisions, now) {
  let out = clone(doc);
  const step = existing(out, wf, key);
  const def = wf.step(key);
  const lbl = label(key, step, def);
  const gate = def && isObject(def.gate) ? def.gate : null;
  const sptr = ptr("steps", key, "status");
  if (!gate || typeof gate.id !== "string")
    throw refuse(
      "SR710",
      `step ${lbl} has no gate in workflow ${repr(wf.id)}: nothing to approve`,
      sptr,
    );
  if (step.status !== "complete")
    throw refuse(
      "SR710",
      `step ${lbl} is ${step.status}: its gate is approved once the step is complete (\`session-resume complete ${key}\` first)`,
      sptr,
    );
  const done = gateApproval(out, key);
  if (done)
    throw refuse(
      "SR710",
      `${gate.id} of step ${lbl} is already approved (${done.id}); nothing to do`,
      "/decision_log",
    );
  for (const [k, v] of Object.entries(decisions)) out = setDecision(out, wf, k, v, "approve");
  if (!Array.isArray(out.decision_log)) out.decision_log = [];
  out.decision_log.push(approvalEntry(out, gate.id, key, decisions, now));
  return out;
}

/**
 * What completing step `key` of `doc` (the state before the write) leaves unrecorded
 * (docs/spec.md §4; the reference's `completion_gaps`): SR716 for its checkpoints after
 * `sub_step` (all of them when none was recorded), SR717 for required decisions its gate
 * records that are still empty in `after` (the new document; default `doc`). Warnings: the
 * write goes on.
 * @param {StateDocument} doc @param {Workflow} wf @param {string} key
 * @param {StateDocument | null} [after] @returns {import("./types.js").Found[]}
 */
export function completionGaps(doc, wf, key, after = null) {
  /** @type {import("./types.js").Found[]} */
  const out = [];
  const def = wf.step(key);
  if (!def) return out;
  const steps = isObj(doc.steps) ? doc.steps : {};
  const step = isObj(steps[key]) ? steps[key] : {};
  const label = def.name ? `${key} (${def.name})` : key;
  const ids = def.checkpoints;
  const sub = step.sub_step;
  const missing = ids.includes(sub)
    ? ids.slice(ids.indexOf(sub) + 1)
    : sub !== null && sub !== undefined
      ? []
      : ids;
  if (missing.length) {
    const done = ids.length - missing.length;
    out.push({
      code: "SR716",
      message:
        `step ${label} completed with ${done} of its ${ids.length} checkpoints recorded; ` +
        `not recorded: ${missing.join(", ")}`,
      pointer: `/steps/${escapePointer(key)}/sub_step`,
      hint:
        `if that work was not done, reopen the step (\`session-resume start ${key} ` +
        `--force\`), do it and record each checkpoint after its work ` +
        `(\`session-resume checkpoint ${key} ${missing[0]}\` first)`,
    });
  }
  const gate = def.gate;
  const keys = gate && Array.isArray(gate.decisions) ? gate.decisions : [];
  const now = after ?? doc;
  const decisions = isObj(now.decisions) ? now.decisions : {};
  const required = new Set(wf.decisions.filter((d) => d.required).map((d) => d.key));
  const empty = keys.filter(
    (k) =>
      required.has(k) &&
      (!Object.hasOwn(decisions, k) || decisions[k] === null || decisions[k] === ""),
  );
  if (empty.length) {
    out.push({
      code: "SR717",
      message: `step ${label} completed while ${gate?.id || "its gate"} still has no value for ${empty.join(", ")}`,
      pointer: `/decisions/${escapePointer(empty[0])}`,
      hint: `ask the user at ${gate?.id || "the gate"} and record each: \`session-resume decide ${empty[0]} VALUE\``,
    });
  }
  return out;
}

/** @param {unknown} v @returns {v is import("./types.js").JsonObject} */
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {string} p */
const escapePointer = (p) => p.replace(/~/g, "~0").replace(/\//g, "~1");
