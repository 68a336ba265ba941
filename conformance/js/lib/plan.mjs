// The plan of a resume answer (spec §10.2) and its commands, each {run, when} (spec §10.3):
// followed in order and literally, they never record progress before its work. Commands keep
// the placeholders DIR and PROJECT; the session's name and id are filled in by a front end.

import { sessionPath } from "./briefing.mjs";
import { normalize, orderedKeys } from "./rules.mjs";
import { gateApproval } from "./transitions.mjs";

/**
 * @typedef {import("./types.js").StateDocument} StateDocument
 * @typedef {import("./types.js").JsonObject} JsonObject
 */
/**
 * @typedef {import("./types.js").Workflow} Workflow
 * @typedef {import("./types.js").StepDef} StepDef
 */
/** @typedef {import("./types.js").Plan} Plan @typedef {import("./types.js").Command} Command */

export const NOW = "now";
export const CONSENT = "only with the user's consent";
export const WRITERS = [
  "start",
  "checkpoint",
  "complete",
  "skip",
  "session",
  "decide",
  "review-audit",
  "transition",
  "finding",
  "approve",
];
export const WORKING = ["start", "restart_step", "resume_from_checkpoint", "continue_step"];
export const SESSION_START = "session-resume session start";
// An alternative's `when` once the commands begin with the session's start (spec §10.3)
export const AFTER_SESSION_START = ", after the first command (`session start`)";
export const SESSION_END = "session-resume session end";
const FINDINGS_RULE =
  "add each (`finding add TITLE`); fix each, then `finding resolve TITLE`; one only the user can settle stays open for the gate";
const GATE_RULE =
  "ask the user's approval once, showing the deliverables and open findings; then record it with `approve` and the decisions the user gave";
// `when` of the approval's write (spec §10.2)
export const APPROVED_WHEN = "after the user approved";
// A stop before the step is complete (spec §7): the session ends paused.
export const PAUSE = "session-resume session end --reason paused";
const PAUSE_WHEN =
  "only if you must stop before the step is complete: after the write of the last checkpoint whose work is done, instead of the rest (the next chat continues from there)";
const ARTIFACT_RULE =
  "a file a checkpoint's work wrote that its line does not name: add `--artifact PATH` to it";

/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** @param {string} run @param {string} [when] @returns {Command} */
export const cmd = (run, when = NOW) => ({ run, when });

/** Whether a command line writes (so it names the session).
 * @param {string} run
 */
export function isWriter(run) {
  const parts = run.split(/\s+/);
  return parts.length > 1 && WRITERS.includes(parts[1]);
}

/** @param {string | null | undefined} text @param {string} fallback */
function after(text, fallback) {
  let t = (text ?? "").trim().replace(/\.+$/, "") || fallback;
  const word = (t.split(/\s+/)[0] ?? "").replace(/[,:;]+$/, "");
  // a capitalised first word is lowered; an acronym (QA, IaC) or a file name is kept
  if (/^(?:[A-Z][a-z]+(?:-[a-z]+)*|A)$/.test(word)) t = t[0].toLowerCase() + t.slice(1);
  return `after ${t}`;
}

/**
 * @param {StepDef | null} def
 * @param {string} action
 * @param {string | null} sub
 * @returns {string[]}
 */
function remaining(def, action, sub) {
  if (!def) return [];
  const ids = def.checkpoints;
  if (action === "resume_from_checkpoint" && sub !== null)
    return ids.includes(sub) ? ids.slice(ids.indexOf(sub) + 1) : [];
  return ids;
}

/**
 * @param {StateDocument} doc @param {string} key @param {StepDef | null} def @param {Workflow} wf
 * @returns {import("./types.js").Review | null}
 */
function review(doc, key, def, wf) {
  if (!def?.reviewed) return null;
  /** @type {Partial<import("./types.js").ReviewDef>} */
  const r = isObject(wf.review) ? wf.review : {};
  const decision = typeof r.tier_decision === "string" ? r.tier_decision : null;
  const decisions = isObject(doc.decisions) ? doc.decisions : {};
  const value = decision !== null ? decisions[decision] : undefined;
  const passesBy = isObject(r.passes) ? r.passes : {};
  const decided = typeof value === "string" && value in passesBy;
  const tier = decided ? value : (r.default_tier ?? null);
  const passes =
    typeof tier === "string" && Number.isInteger(passesBy[tier]) ? passesBy[tier] : null;
  const audits = isObject(doc.review_audit) ? doc.review_audit : {};
  const recorded = isObject(audits[`step_${key}`]) ? audits[`step_${key}`] : null;
  let write = `session-resume review-audit ${key}`;
  if (typeof tier === "string" && passes !== null)
    write += ` --complexity ${tier} --passes-planned ${passes} --passes-executed ${passes}`;
  return {
    tier: typeof tier === "string" ? tier : null,
    tier_decision: decision,
    tier_decided: decided,
    tier_gate: decidingGate(decision, wf, key),
    passes,
    recorded,
    before: def.reviewAt,
    write,
  };
}

/** The gate whose decisions include `decision` (the review tier's): the first from step `key`
 * on in workflow order; null when none is (one before it has passed undecided: no gate is
 * still to decide it).
 * @param {unknown} decision @param {Workflow} wf @param {string} key @returns {string | null} */
function decidingGate(decision, wf, key) {
  const at = Math.max(
    0,
    wf.steps.findIndex((s) => s.key === key),
  );
  for (const s of wf.steps.slice(at)) {
    const g = s.gate;
    if (
      g &&
      typeof g.id === "string" &&
      (g.decisions || []).includes(/** @type {string} */ (decision))
    )
      return g.id;
  }
  return null;
}

/**
 * Step `key`'s gate: its decisions, whether its approval is recorded (spec §4.1) and the
 * write recording it.
 * @param {StateDocument} doc @param {StepDef | null} def @param {Workflow} wf @param {string} key
 * @returns {import("./types.js").Gate | null}
 */
function gate(doc, def, wf, key) {
  if (!def || !isObject(def.gate)) return null;
  const entry = gateApproval(doc, key);
  const decisions = isObject(doc.decisions) ? doc.decisions : {};
  const keys = Array.isArray(def.gate.decisions) ? def.gate.decisions : [];
  return {
    id: def.gate.id ?? null,
    kind: def.gate.kind ?? null,
    session_break: Boolean(def.gate.session_break),
    decisions: keys.map((k) => {
      const d = wf.decisions.find((x) => x.key === k);
      const allowed =
        d && Array.isArray(d.enum) && d.enum.length ? d.enum.filter((v) => v !== "") : null;
      return { key: k, allowed, required: d ? d.required : false, value: decisions[k] ?? null };
    }),
    rule: GATE_RULE,
    approved: entry ? /** @type {string} */ (entry.id ?? null) : null,
    approve: `session-resume approve ${key}`,
  };
}

/**
 * @param {StateDocument} doc @param {string} key @param {Workflow} wf
 * @returns {import("./types.js").NextStep | null}
 */
function nextStep(doc, key, wf) {
  const steps = isObject(doc.steps) ? doc.steps : {};
  const order = orderedKeys(steps, wf);
  for (const k of wf.stepKeys) if (!order.includes(k)) order.push(k);
  if (!order.includes(key)) return null;
  for (const k of order.slice(order.indexOf(key) + 1)) {
    const st = isObject(steps[k]) ? steps[k] : {};
    if (st.status === "complete" || st.status === "skipped") continue;
    const def = wf.step(k);
    const optional = def ? def.optional : false;
    return {
      key: k,
      name: def ? def.name : (st.name ?? null),
      optional,
      start: `session-resume start ${k}`,
      skip: optional ? `session-resume skip ${k} --reason "optional step not needed"` : null,
      transition: `session-resume transition --complete ${key} --start ${k}`,
    };
  }
  return null;
}

/** The gate still open before step `key` (spec §10.2): for a pending step to start, the gate
 * of the last complete step before it, skipped steps passed over; else null.
 * @param {StateDocument} doc @param {string} key @param {Workflow} wf @param {string} action
 * @returns {Plan["open_gate"]}
 */
function openGate(doc, key, wf, action) {
  const steps = isObject(doc.steps) ? doc.steps : {};
  if (action !== "start" || !isObject(steps[key]) || steps[key].status !== "pending") return null;
  const order = orderedKeys(steps, wf);
  if (!order.includes(key)) return null;
  for (const k of order.slice(0, order.indexOf(key)).reverse()) {
    const status = isObject(steps[k]) ? steps[k].status : undefined;
    if (status === "skipped") continue;
    const g = status === "complete" ? gate(doc, wf.step(k), wf, k) : null;
    return g === null || g.approved ? null : { step: k, ...g };
  }
  return null;
}

/** What the review audit's `when` adds while the tier is not decided (spec §10.3).
 * @param {NonNullable<Plan["review_audit"]>} audit */
function tierWords(audit) {
  if (audit.tier_decided) return "";
  const until = audit.tier_gate
    ? `${audit.tier_gate} decides ${audit.tier_decision}`
    : `${audit.tier_decision} is decided`;
  return ` (tier ${audit.tier} until ${until}: use it as printed)`;
}

/** @param {Plan["open_gate"]} g @param {boolean} [optional] */
function startWhen(g, optional = false) {
  const chose = "the user chose to run this optional step rather than skip it (ask once)";
  if (!g) return optional ? `only if ${chose}` : NOW;
  const when = `after the approval of ${g.id} of step ${g.step} is recorded (above)`;
  return optional ? `${when}, and ${chose}` : when;
}

// Python's shlex.quote: the commands read the same in both implementations
export const shellQuote = (/** @type {string} */ s) =>
  s === "" ? "''" : /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\"'\"'")}'`;

/** Each remaining checkpoint with its write; the write records (`--artifact`) each of the
 * step's deliverables its state does not list yet, at the first remaining checkpoint that is
 * the one writing it or a later one (spec §10.2).
 * @param {string} key @param {StepDef | null} def @param {JsonObject} st @param {string[]} ids
 * @param {string | null} sessionRel @returns {Plan["checkpoints"]} */
function checkpointWrites(key, def, st, ids, sessionRel) {
  // the listed paths in their one form: normalised, a bare name in the session directory
  const listed = new Set(
    (Array.isArray(st.artifacts) ? st.artifacts : [])
      .filter((/** @type {unknown} */ p) => typeof p === "string")
      .map((/** @type {string} */ p) =>
        p.includes("/") ? normalize(p) : sessionPath(sessionRel, p),
      ),
  );
  const order = def ? def.checkpoints : [];
  let todo = (def?.deliverables ?? []).filter((d) => !listed.has(sessionPath(sessionRel, d.file)));
  return ids.map((id) => {
    const now = todo.filter((d) => order.indexOf(d.writtenAt) <= order.indexOf(id));
    todo = todo.filter((d) => !now.includes(d));
    const args = now.map((d) => ` --artifact ${shellQuote(sessionPath(sessionRel, d.file))}`);
    return {
      id,
      after: def?.after[id] ?? "", // (no checkpoints remain without a def)
      write: `session-resume checkpoint ${key} ${id}${args.join("")}`,
    };
  });
}

/** The plan for step `key` of the usable state `doc` (a working action).
 * @param {StateDocument} doc @param {string} key @param {Workflow} wf
 * @param {{action: string, sub: string | null, sessionRel?: string | null}} opts @returns {Plan}
 */
export function buildPlan(doc, key, wf, { action, sub, sessionRel = null }) {
  const def = wf.step(key);
  const steps = isObject(doc.steps) ? doc.steps : {};
  const st = isObject(steps[key]) ? steps[key] : {};
  const findings = Array.isArray(doc.open_findings) ? doc.open_findings : [];
  const g = gate(doc, def, wf, key);
  const nxt = nextStep(doc, key, wf);
  // one owner for the next step (spec §10.2): after a session break the next chat
  if (nxt) nxt.by = g?.session_break ? "next_chat" : "this_chat";
  return {
    step: key,
    name: def ? def.name : (st.name ?? null),
    optional: def ? def.optional : false,
    open_gate: openGate(doc, key, wf, action),
    checkpoints: checkpointWrites(key, def, st, remaining(def, action, sub), sessionRel),
    artifacts_rule: ARTIFACT_RULE,
    review_audit: review(doc, key, def, wf),
    open_findings: { count: findings.length, blocks_complete: false, rule: FINDINGS_RULE },
    complete: `session-resume complete ${key}`,
    gate: g,
    next_step: nxt,
  };
}

/** The writes of the decisions of step `key`'s gate that are required and still empty (else
 * `complete` warns, SR717, or the next step starts without them): each only with the user's
 * choice, which replaces VALUE.
 * @param {Plan["gate"] | Plan["open_gate"]} g @param {string} key @returns {Command[]}
 */
export function gateDecisions(g, key) {
  if (!g) return [];
  return emptyRequired(g).map((d) => {
    const allowed = d.allowed ? ` (one of: ${d.allowed.join(", ")})` : "";
    return cmd(
      `session-resume decide ${d.key} VALUE`,
      `only with the user's choice of ${d.key} at ${g.id} of step ${key}${allowed}, which replaces VALUE`,
    );
  });
}

/** The gate's decisions the workflow requires and the state leaves empty.
 * @param {NonNullable<Plan["gate"]>} g
 */
function emptyRequired(g) {
  return g.decisions.filter(
    (d) => d.required && (d.value === null || d.value === undefined || d.value === ""),
  );
}

/** The gate of complete step `key` while it is still open: the next step in workflow order
 * that is neither complete nor skipped is still pending; else null.
 * @param {StateDocument} doc @param {string} key @param {Workflow} wf @returns {Plan["gate"]}
 */
export function gateAfter(doc, key, wf) {
  const steps = isObject(doc.steps) ? doc.steps : {};
  const order = orderedKeys(steps, wf);
  /** @param {string} k */
  const status = (k) => (isObject(steps[k]) ? steps[k].status : undefined);
  if (status(key) !== "complete" || !order.includes(key)) return null;
  const later = order
    .slice(order.indexOf(key) + 1)
    .filter((k) => status(k) !== "complete" && status(k) !== "skipped");
  if (!later.length || status(later[0]) !== "pending") return null;
  const g = gate(doc, wf.step(key), wf, key);
  return g === null || g.approved ? null : g;
}

/** The step after `key` still to do (null: none). @param {StateDocument} doc
 * @param {string} key @param {Workflow} wf */
export function nextStepOf(doc, key, wf) {
  return nextStep(doc, key, wf);
}

/** The plan as the ordered command list. `pending`: the step has not started (an optional
 * one starts only once the user chose to run it; one a `transition` started was chosen).
 * @param {Plan} plan @param {string} action @param {boolean} [pending] @returns {Command[]}
 */
export function planCommands(plan, action, pending = false) {
  /** @type {Command[]} */
  const out = [];
  if (action === "start" || action === "restart_step") {
    const g = plan.open_gate;
    if (g) out.push(...gateDecisions(g, g.step), cmd(g.approve, approvedWhen(g)));
    out.push(cmd(`session-resume start ${plan.step}`, startWhen(g, plan.optional && pending)));
  }
  const audit = plan.review_audit;
  let auditCmd = null;
  if (audit !== null && audit.recorded === null) {
    const p = audit.passes;
    auditCmd = cmd(
      audit.write,
      (p
        ? `after ${p} challenger review pass${p !== 1 ? "es" : ""}`
        : "after the challenger review has run") + tierWords(audit),
    );
  }
  // The audit goes just before the checkpoint whose work includes the review; first when that
  // checkpoint is already recorded; last (before `complete`) when the workflow names none.
  const ids = plan.checkpoints.map((c) => c.id);
  const before = audit !== null ? audit.before : null;
  const at = before === null ? ids.length : ids.includes(before) ? ids.indexOf(before) : 0;
  plan.checkpoints.forEach((c, i) => {
    if (i === at && auditCmd !== null) out.push(auditCmd);
    out.push(cmd(c.write, after(c.after, `the work of checkpoint ${c.id}`)));
  });
  if (at === ids.length && auditCmd !== null) out.push(auditCmd);
  out.push(...gateDecisions(plan.gate, plan.step));
  const last = plan.checkpoints.length ? plan.checkpoints[plan.checkpoints.length - 1].id : null;
  out.push(
    cmd(plan.complete, last ? `after checkpoint ${last}` : "after the step's remaining work"),
  );
  if (plan.gate && !plan.gate.approved) out.push(cmd(plan.gate.approve, approvedWhen(plan.gate)));
  out.push(cmd(SESSION_END, endWhen(plan.gate, plan.next_step)));
  return out;
}

/** `when` of a gate's approval write: once the user approved it (spec §10.2).
 * @param {NonNullable<Plan["gate"]>} g */
export function approvedWhen(g) {
  return `${APPROVED_WHEN} ${g.id} (ask once; add \`--decision KEY=VALUE\` for each decision the user gave)`;
}

/** `when` of `session end`: when the agent stops, or, at a gate that ends the chat
 *  (`session_break`), right after the gate, where an optional next step's skip the user
 *  chooses is recorded.
 * @param {Plan["gate"]} gate @param {Plan["next_step"]} [nxt] @returns {string}
 */
export function endWhen(gate, nxt = null) {
  if (gate?.session_break) {
    const skip = nxt?.optional ? ` (and the skip of ${nxt.key} if the user chose it)` : "";
    const then = nxt
      ? `; the next chat starts step ${nxt.key} under its own session, from its own \`resume\``
      : "";
    return `after the approval of ${gate.id} is recorded${skip}: this chat ends here${then}`;
  }
  return "when you stop";
}

/** What may be run instead of the commands: skipping an optional step not yet worked on.
 * @param {Plan} plan @param {string} action @returns {Command[]}
 */
export function planAlternatives(plan, action) {
  const pause = plan.checkpoints.length ? [cmd(PAUSE, PAUSE_WHEN)] : [];
  if (plan.optional && (action === "start" || action === "restart_step")) {
    return [
      cmd(
        `session-resume skip ${plan.step} --reason "optional step not needed"`,
        "only if the user decides to skip this optional step: instead of its start and its " +
          "work",
      ),
      ...pause,
    ];
  }
  return pause;
}
