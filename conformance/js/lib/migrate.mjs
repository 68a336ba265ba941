// Migration 1.0 -> 2.0 -> 3.0 and the 3.0 repair pass (spec §9). Pure: no I/O, the clock
// given. Every change is noted: SR150 (a change worth knowing), SR151 (a value 3.0 has no place
// for, kept under `x-legacy`, never dropped). Each step's result is checked against its
// version's schema (SR152 if it fails).

import { check } from "./schema.mjs";
import { CORE_KEYS } from "./rules.mjs";
import { formatTimestamp, parseTimestamp } from "./timestamps.mjs";
import { CURRENT, isKnown, KNOWN, newerThanKnown, schemaOf, versionOf } from "./versions.mjs";
import { loadWorkflow, WorkflowError } from "./workflow.mjs";

export class MigrationError extends Error {
  constructor(codes, message) {
    super(message);
    this.codes = codes;
  }
}

const LEGACY = "x-legacy";
const STATUSES = ["pending", "in_progress", "complete", "skipped"];
const STEP_FIELDS = ["name", "agent", "status", "sub_step", "started", "completed", "artifacts", "context_files_used"];
const STEP_OPTIONAL = ["attempts", "telemetry", "skip_reason"];
const STEP_KEY = /^[0-9]+(_[0-9]+)?$/;
const DOTTED = /^([0-9]+)\.([0-9]+)$/;
const DECISION_ID = /^D[0-9]{3,}$/;
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const RESOLVED = ["resolved", "closed", "done", "fixed", "wontfix", "won't fix"];
const COMPLEXITY = { low: "simple", medium: "standard", high: "complex" };

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => has(b, k) && deepEqual(a[k], b[k]));
}

class Notes {
  constructor() {
    this.codes = new Set();
  }
  change() {
    this.codes.add("SR150");
  }
  keep() {
    this.codes.add("SR151");
  }
  /** Keep `value` under doc["x-legacy"][key] (key_2, key_3… when taken by another value). */
  aside(doc, key, value) {
    if (!isObject(doc[LEGACY])) doc[LEGACY] = {};
    const legacy = doc[LEGACY];
    let k = key;
    if (has(legacy, k) && !deepEqual(legacy[k], value)) {
      let n = 2;
      while (has(legacy, `${key}_${n}`)) n++;
      k = `${key}_${n}`;
    }
    legacy[k] = value;
    this.keep();
  }
}

/** A timestamp in the protocol's form: [value or null, usable]. Offsets are converted to Z. */
function normalizeTimestamp(value) {
  if (value === null || value === undefined || value === "") return [null, true];
  if (typeof value !== "string") return [null, false];
  if (parseTimestamp(value) !== null) return [value, true];
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})$/.exec(value);
  if (!m) return [null, false];
  const ms = Date.parse(`${m[1]}T${m[2]}${m[3]}`);
  if (Number.isNaN(ms)) return [null, false];
  return [formatTimestamp(ms * 1000), true];
}

const dotted = (key) => {
  const m = DOTTED.exec(key);
  return m ? `${m[1]}_${m[2]}` : key;
};

// --- the version steps -------------------------------------------------------------------

function v1ToV2(doc, notes) {
  const out = clone(doc);
  if (typeof out.$schema === "string" && !out.$schema.endsWith(".json")) {
    delete out.$schema; // the informal "session-state-v1" marker
    notes.change();
  }
  out.schema_version = "2.0";
  return out;
}

/** Whether a v2 lock or claim holds anything (zero retries and an empty event log do not count). */
function holdsValues(v) {
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) {
    return Object.entries(v).some(([k, x]) => (["retry_count", "event_log"].includes(k) ? Boolean(x) && holdsValues(x) : holdsValues(x)));
  }
  return v !== null && v !== undefined;
}

function v2ToV3(doc, notes, ctx) {
  const out = clone(doc);
  for (const key of ["lock", "stale_threshold_ms"]) {
    if (!has(out, key)) continue;
    const value = out[key];
    delete out[key];
    if (key === "lock" && holdsValues(value)) notes.aside(out, key, value);
    else notes.change();
  }
  if (isObject(out.steps)) {
    for (const step of Object.values(out.steps)) {
      if (!isObject(step) || !has(step, "claim")) continue;
      const claim = step.claim;
      delete step.claim;
      if (holdsValues(claim)) {
        if (!isObject(step[LEGACY])) step[LEGACY] = {};
        step[LEGACY].claim = claim;
        notes.keep();
      } else notes.change();
    }
  }
  out.schema_version = "3.0";
  return repair(out, notes, ctx, true);
}

// --- the 3.0 repair pass -----------------------------------------------------------------

function chooseWorkflow(doc, notes, ctx) {
  if (ctx.workflow) return ctx.workflow;
  try {
    if (typeof doc.workflow === "string") return loadWorkflow(doc.workflow);
    const apex = loadWorkflow("apex");
    const names = new Set(apex.steps.map((s) => s.name));
    const steps = isObject(doc.steps) ? Object.values(doc.steps) : [];
    if (steps.some((s) => isObject(s) && typeof s.name === "string" && !names.has(s.name))) {
      notes.change(); // not apex's steps: migrate under generic
      return loadWorkflow("generic");
    }
    return apex;
  } catch (err) {
    if (err instanceof WorkflowError) return null;
    throw err;
  }
}

function repair(doc, notes, ctx, fromOld = false) {
  const out = clone(doc);
  const wf = chooseWorkflow(out, notes, ctx);
  if (fromOld) {
    if (wf && !has(out, "workflow")) { out.workflow = wf.id; notes.change(); }
    const known = new Set([...CORE_KEYS, ...(wf ? wf.fields.map((f) => f.name) : [])]);
    for (const key of Object.keys(out)) {
      if (known.has(key) || key.startsWith("x-") || key === "complexity") continue;
      const value = out[key];
      delete out[key];
      notes.aside(out, key, value);
    }
  }
  fixProject(out, notes, ctx);
  fixUpdated(out, notes, ctx);
  const steps = fixSteps(out, wf, notes);
  fixCurrentStep(out, steps, notes);
  fixReviewAudit(out, notes);
  fixFindings(out, notes);
  fixDecisions(out, wf, notes);
  fixDecisionLog(out, notes);
  return out;
}

function fixProject(doc, notes, ctx) {
  const p = doc.project;
  if (typeof p === "string" && PROJECT.test(p) && p.length <= 128) return;
  const hint = ctx.projectHint;
  if (hint && PROJECT.test(hint)) {
    if (p !== undefined && p !== null) notes.aside(doc, "project", p);
    doc.project = hint;
    notes.change();
  }
}

function fixUpdated(doc, notes, ctx) {
  const raw = doc.updated;
  const [ts, ok] = normalizeTimestamp(raw);
  if (ts !== null) {
    if (ts !== raw) { doc.updated = ts; notes.change(); }
    return;
  }
  if (!ok) notes.aside(doc, "updated", raw);
  doc.updated = formatTimestamp(ctx.now);
  notes.change();
}

const keyNum = (k) => k.split("_").map(Number).concat([0]).slice(0, 2);

function fixSteps(doc, wf, notes) {
  let steps = doc.steps;
  if (!isObject(steps)) {
    if (steps !== undefined && steps !== null) throw new MigrationError(["SR152"], "steps is not an object");
    steps = {};
  }
  const renamed = new Map();
  for (const [key, step] of Object.entries(steps)) {
    const k = dotted(key);
    if (k !== key) {
      if (has(steps, k)) { notes.aside(doc, `step_${key}`, step); continue; }
      notes.change();
    }
    if (!STEP_KEY.test(k)) { notes.aside(doc, `step_${key}`, step); continue; }
    renamed.set(k, step);
  }
  let order = [...renamed.keys()];
  if (wf && !wf.freeSteps) {
    let lastStarted = -1;
    for (const [k, st] of renamed) {
      const i = wf.stepKeys.indexOf(k);
      if (i >= 0 && isObject(st) && ["in_progress", "complete", "skipped"].includes(st.status)) lastStarted = Math.max(lastStarted, i);
    }
    wf.steps.forEach((def, i) => {
      if (renamed.has(def.key)) return;
      // a step that did not exist when the session passed it (apex 3_5) is skipped, not pending
      renamed.set(def.key, i < lastStarted
        ? { status: "skipped", skip_reason: "added by migration: the step did not exist when the session passed it" }
        : { status: "pending" });
      notes.change();
    });
    const rank = (k) => (wf.stepKeys.includes(k) ? wf.stepKeys.indexOf(k) : wf.stepKeys.length);
    order = [...renamed.keys()].sort((a, b) => rank(a) - rank(b) || keyNum(a)[0] - keyNum(b)[0] || keyNum(a)[1] - keyNum(b)[1]);
  }
  const fixed = {};
  for (const k of order) fixed[k] = fixStep(k, renamed.get(k), wf, doc, notes);
  if (!deepEqual(fixed, steps)) doc.steps = fixed;
  return fixed;
}

function fixStep(key, input, wf, doc, notes) {
  const def = wf ? wf.step(key) : null;
  let step = input;
  if (step === null || step === undefined) step = {};
  if (!isObject(step)) { notes.aside(doc, `step_${key}`, step); step = {}; }
  const out = clone(step);
  const fresh = Object.keys(step).every((k) => k === "status" || k === "skip_reason"); // added above
  const note = () => { if (!fresh) notes.change(); };
  if (typeof out.name !== "string" || out.name === "") {
    if (has(out, "name")) notes.aside(out, "name", out.name);
    out.name = def ? def.name : `Step ${key}`;
    note();
  }
  if (typeof out.agent !== "string") {
    if (has(out, "agent")) notes.aside(out, "agent", out.agent);
    out.agent = def && def.agents.length === 1 ? def.agents[0] : "";
    note();
  }
  if (!STATUSES.includes(out.status)) {
    const original = out.status;
    if (!isObject(out[LEGACY])) out[LEGACY] = {};
    out[LEGACY].status = original;
    if (original === "blocked") {
      // a blocker is an open finding of a step still in progress
      out.status = "in_progress";
      const title = `step ${key} (${out.name}) is blocked`;
      if (!has(doc, "open_findings") || doc.open_findings === null) doc.open_findings = [];
      if (Array.isArray(doc.open_findings) && !doc.open_findings.includes(title)) doc.open_findings.push(title);
      notes.change();
    } else {
      out.status = "pending";
      notes.keep();
    }
  }
  for (const name of ["started", "completed"]) {
    const raw = out[name];
    const [ts, ok] = normalizeTimestamp(raw);
    if (!ok) {
      if (!isObject(out[LEGACY])) out[LEGACY] = {};
      out[LEGACY][name] = raw;
      notes.keep();
    }
    if (ts !== raw || !has(out, name)) {
      if (has(out, name) && raw !== null && raw !== "") notes.change();
      out[name] = ts;
    }
  }
  if (out.status === "complete" && out.completed === null) {
    out.completed = doc.updated; // the latest it can have been
    notes.change();
  }
  if (out.status === "in_progress" && out.started === null) {
    out.started = doc.updated;
    notes.change();
  }
  const sub = out.sub_step;
  if (sub === "" || !has(out, "sub_step")) out.sub_step = null;
  else if (sub !== null && typeof sub !== "string") {
    if (!isObject(out[LEGACY])) out[LEGACY] = {};
    out[LEGACY].sub_step = sub;
    out.sub_step = null;
    notes.keep();
  } else if (typeof sub === "string" && ["complete", "pending", "skipped"].includes(out.status)) {
    out.sub_step = null;
    notes.change();
  } else if (typeof sub === "string" && def && !def.checkpoints.includes(sub)) {
    let current = has(def.legacy, sub) ? def.legacy[sub] : null;
    if (current === null && def.checkpoints.includes(sub.replaceAll(".", "_"))) current = sub.replaceAll(".", "_");
    if (current !== null) { out.sub_step = current; notes.change(); }
  }
  for (const name of ["artifacts", "context_files_used"]) {
    const value = out[name];
    if (value === null || value === undefined) {
      out[name] = [];
      if (has(step, name)) notes.change();
    } else if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v)) {
      if (!isObject(out[LEGACY])) out[LEGACY] = {};
      out[LEGACY][name] = value;
      out[name] = Array.isArray(value) ? value.filter((v) => typeof v === "string" && v) : [];
      notes.keep();
    }
  }
  for (const k of Object.keys(out)) {
    if (STEP_FIELDS.includes(k) || STEP_OPTIONAL.includes(k) || k.startsWith("x-")) continue;
    const value = out[k];
    delete out[k];
    if (!isObject(out[LEGACY])) out[LEGACY] = {};
    out[LEGACY][k] = value;
    notes.keep();
  }
  const ordered = {};
  for (const k of STEP_FIELDS) ordered[k] = out[k];
  for (const k of Object.keys(out)) if (!has(ordered, k)) ordered[k] = out[k];
  return ordered;
}

function fixCurrentStep(doc, steps, notes) {
  const cur = doc.current_step;
  if (typeof cur === "number" && Number.isInteger(cur) && cur >= 0) return;
  let value;
  if (typeof cur === "string" && /^[0-9]+([._][0-9]+)?$/.test(cur)) value = Number(cur.split(/[._]/)[0]);
  else {
    const running = Object.entries(steps).filter(([, s]) => s.status === "in_progress").map(([k]) => k);
    value = running.length ? keyNum(running[0])[0] : 0;
    if (cur !== undefined && cur !== null) notes.aside(doc, "current_step", cur);
  }
  doc.current_step = value;
  notes.change();
}

function fixReviewAudit(doc, notes) {
  const audit = doc.review_audit;
  if (audit === undefined || audit === null) return;
  if (!isObject(audit)) {
    delete doc.review_audit;
    notes.aside(doc, "review_audit", audit);
    return;
  }
  const fixed = {};
  for (const [key, entry0] of Object.entries(audit)) {
    let entry = entry0;
    const m = /^step_([0-9]+)\.([0-9]+)$/.exec(key);
    const k = m ? `step_${m[1]}_${m[2]}` : key;
    if (m) notes.change();
    if (!/^step_[0-9]+(_[0-9]+)?$/.test(k) || has(fixed, k)) {
      notes.aside(doc, `review_audit_${key}`, entry);
      continue;
    }
    if (isObject(entry) && Array.isArray(entry.skipped)) {
      const ints = entry.skipped.map((x) => (typeof x === "string" && /^[0-9]+$/.test(x) ? Number(x) : x));
      if (!deepEqual(ints, entry.skipped)) { entry = { ...entry, skipped: ints }; notes.change(); }
    }
    fixed[k] = entry;
  }
  if (!deepEqual(fixed, audit) || Object.keys(fixed).join() !== Object.keys(audit).join()) doc.review_audit = fixed;
}

function findingText(item) {
  if (item.type === "circuit_breaker") {
    const parts = [String(item.failure_category || "failure")];
    if (item.last_error) parts.push(String(item.last_error));
    return `circuit breaker: ${parts.join(" - ")}`;
  }
  for (const k of ["title", "description", "text", "id"]) {
    if (typeof item[k] === "string" && item[k].trim()) return item[k].trim();
  }
  return JSON.stringify(item);
}

function fixFindings(doc, notes) {
  const findings = doc.open_findings;
  if (findings === undefined || findings === null) { doc.open_findings = []; notes.change(); return; }
  if (!Array.isArray(findings)) { notes.aside(doc, "open_findings", findings); doc.open_findings = []; return; }
  const out = [];
  const resolved = [];
  const converted = [];
  for (const item of findings) {
    let text;
    if (typeof item === "string") text = item;
    else if (isObject(item)) {
      if (RESOLVED.includes(String(item.status ?? "").toLowerCase())) { resolved.push(item); continue; }
      text = findingText(item);
      converted.push(item);
      notes.change();
    } else text = String(item);
    if (text && !out.includes(text)) out.push(text);
  }
  if (converted.length) notes.aside(doc, "open_finding_objects", converted);
  if (resolved.length) notes.aside(doc, "resolved_findings", resolved);
  if (!deepEqual(out, findings)) doc.open_findings = out;
}

function fixDecisions(doc, wf, notes) {
  let dec = doc.decisions;
  if (dec === undefined || dec === null) { dec = doc.decisions = {}; notes.change(); }
  if (!isObject(dec)) { notes.aside(doc, "decisions", dec); dec = doc.decisions = {}; }
  if (has(doc, "complexity")) {
    const top = doc.complexity;
    delete doc.complexity;
    if (wf && wf.id === "apex" && !has(dec, "complexity")) { dec.complexity = top; notes.change(); }
    else notes.aside(doc, "complexity", top);
  }
  if (!wf) return;
  const enumOf = Object.fromEntries(wf.decisions.filter((d) => d.enum !== undefined).map((d) => [d.key, d.enum]));
  const comp = dec.complexity;
  if (enumOf.complexity && typeof comp === "string" && !enumOf.complexity.includes(comp)) {
    const mapped = COMPLEXITY[comp.toLowerCase()];
    if (mapped && enumOf.complexity.includes(mapped)) { dec.complexity = mapped; notes.change(); }
  }
  for (const d of wf.decisions) {
    if (d.required && !has(dec, d.key)) { dec[d.key] = ""; notes.change(); }
  }
  if (wf.id === "apex") {
    // apex keeps iac_tool twice; fill the empty copy from the other
    const top = doc.iac_tool;
    const inner = dec.iac_tool;
    if (typeof top === "string" && typeof inner === "string" && top !== inner) {
      if (!top) { doc.iac_tool = inner; notes.change(); }
      else if (!inner) { dec.iac_tool = top; notes.change(); }
      else notes.keep(); // both set and different: kept, to be resolved by hand
    }
  }
}

function entryIsV3(e) {
  const step = e.step;
  const stepOk = step === undefined || step === null || (Number.isInteger(step) && step >= 0) || (typeof step === "string" && STEP_KEY.test(step));
  return ["id", "title", "choice", "rationale"].every((k) => typeof e[k] === "string" && e[k]) &&
    DECISION_ID.test(e.id) && stepOk && (!has(e, "timestamp") || parseTimestamp(e.timestamp) !== null);
}

function fixDecisionLog(doc, notes) {
  const log = doc.decision_log;
  if (log === undefined || log === null) return;
  if (!Array.isArray(log)) { delete doc.decision_log; notes.aside(doc, "decision_log", log); return; }
  const used = log.filter((e) => isObject(e) && typeof e.id === "string" && DECISION_ID.test(e.id)).map((e) => Number(e.id.slice(1)));
  let next = Math.max(0, ...used) + 1;
  const out = [];
  let changed = false;
  log.forEach((entry, i) => {
    if (!isObject(entry)) { notes.aside(doc, `decision_log_${i}`, entry); changed = true; return; }
    const e = clone(entry);
    if (entryIsV3(e)) { out.push(e); return; }
    if (!(typeof e.id === "string" && DECISION_ID.test(e.id))) {
      if (has(e, "id")) e["x-legacy-id"] = e.id;
      e.id = `D${String(next++).padStart(3, "0")}`;
    }
    // apex-recall {decision, rationale, step, timestamp}; docs-site {key, value, reason}
    if (!has(e, "title")) {
      const title = e.decision || e.key;
      if (typeof title === "string" && title.trim()) e.title = title.trim().slice(0, 120);
    }
    if (!has(e, "choice")) {
      let choice;
      if (has(e, "decision")) { choice = e.decision; delete e.decision; }
      else { choice = e.value; delete e.value; }
      if (choice !== undefined && choice !== null) e.choice = typeof choice === "string" ? choice : String(choice);
    }
    if (!has(e, "rationale")) {
      const reason = e.reason;
      delete e.reason;
      e.rationale = typeof reason === "string" && reason ? reason : "(not recorded)";
    }
    if (has(e, "key") && e.title === e.key) delete e.key;
    for (const k of ["title", "choice"]) if (typeof e[k] !== "string" || !e[k]) e[k] = "(not recorded)";
    if (typeof e.step === "string" && DOTTED.test(e.step)) e.step = dotted(e.step);
    if (has(e, "timestamp") && e.timestamp !== null) {
      const [ts, ok] = normalizeTimestamp(e.timestamp);
      if (!ok || ts === null) { e["x-legacy-timestamp"] = e.timestamp; delete e.timestamp; }
      else if (ts !== e.timestamp) e.timestamp = ts;
    }
    if (!deepEqual(e, entry)) { notes.change(); changed = true; }
    out.push(e);
  });
  if (changed) doc.decision_log = out;
}

// --- the chain ---------------------------------------------------------------------------

/** The migration step that produces each version from the one before (versions.mjs order). */
const STEPS = { "2.0": v1ToV2, "3.0": v2ToV3 };
for (const v of KNOWN.slice(1)) {
  if (!(v in STEPS)) throw new Error(`versions.mjs names ${v} but migrate.mjs has no step to it`);
}

function mustBeValid(doc, version) {
  if (check(schemaOf(version), doc).length) {
    throw new MigrationError(["SR152"], `the result is not a valid ${version} state`);
  }
}

/** Migrate to 3.0 (or repair a 3.0 document): {document, changed, codes, from}. */
export function migrate(doc, { now, workflow = null, projectHint = null }) {
  const v = versionOf(doc);
  if (v.invalid) throw new MigrationError(["SR142"], "schema_version is not a version string");
  if (newerThanKnown(v.num)) throw new MigrationError(["SR141"], `schema version ${v.raw} is newer than ${CURRENT}`);
  if (!isKnown(v.raw)) throw new MigrationError(["SR142"], `schema version ${v.raw} does not exist`);
  const notes = new Notes();
  const ctx = { now, workflow, projectHint };
  let cur = doc;
  // one version at a time, each result checked against its version's schema
  for (const next of KNOWN.slice(KNOWN.indexOf(v.raw) + 1)) {
    cur = STEPS[next](cur, notes, ctx);
    mustBeValid(cur, next);
  }
  if (v.raw === CURRENT) { cur = repair(cur, notes, ctx); mustBeValid(cur, CURRENT); }
  const changed = !deepEqual(cur, doc);
  return { document: cur, changed, codes: changed ? [...notes.codes] : [], from: v.raw };
}
