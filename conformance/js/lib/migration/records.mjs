// The 3.0 repair of the session-wide records: review audit, findings, decisions and the
// decision log (docs/spec.md §9.2). Mirrors Python's core/migration/repair_v3/records.py.

import { pyRepr } from "../findings.mjs";
import { parseTimestamp } from "../timeutil.mjs";
import {
  clone,
  deepEqual,
  has,
  isObject,
  LEGACY,
  legacyOf,
  pointer,
  sameShape,
} from "./context.mjs";
import {
  COMPLEXITY,
  DECISION_ID,
  DOTTED_KEY,
  isInt,
  MAX_STEP,
  newKey,
  RESOLVED,
  STEP_KEY,
  tsValue,
  VERSION,
} from "./values.mjs";

/**
 * @typedef {import("../types.js").Json} Json
 * @typedef {import("../types.js").JsonObject} JsonObject
 */
/**
 * @typedef {import("../types.js").Workflow} Workflow
 * @typedef {import("./context.mjs").Context} Context
 */

/** @param {JsonObject} doc @param {Context} ctx */
export function repairReviewAudit(doc, ctx) {
  const audit = doc.review_audit;
  if (audit === undefined || audit === null) return;
  if (!isObject(audit)) {
    delete doc.review_audit;
    ctx.aside(doc, "review_audit", audit, "review_audit is not an object", "/review_audit");
    return;
  }
  /** @type {JsonObject} */
  const fixed = {};
  for (const [key, entry0] of Object.entries(audit)) {
    let entry = entry0;
    const m = /^step_([0-9]+)\.([0-9]+)$/.exec(key);
    const k = m ? `step_${m[1]}_${m[2]}` : key;
    if (m) ctx.note(`review_audit key '${key}' renamed '${k}'`, pointer(["review_audit", key]));
    if (!/^step_[0-9]+(_[0-9]+)?$/.test(k) || has(fixed, k)) {
      ctx.aside(
        doc,
        `review_audit_${key}`,
        entry,
        `review_audit key '${key}' is invalid`,
        pointer(["review_audit", key]),
      );
      continue;
    }
    if (isObject(entry) && Array.isArray(entry.skipped)) entry = skipped(k, entry, ctx);
    fixed[k] = entry;
  }
  if (!sameShape(fixed, audit)) doc.review_audit = fixed;
}

const PASS_NAME = /^(?:pass_?)?([0-9]+)$/;

/** `skipped` holds pass numbers. Upstream wrote strings: "2" and "pass_3" are the pass numbers
 * 2 and 3 (SR150); a name such as "challenger-review" names no pass and moves to the entry's
 * x-legacy.skipped (SR151; docs/spec.md §9.2).
 * @param {string} key @param {JsonObject} entry @param {Context} ctx @returns {JsonObject}
 */
function skipped(key, entry, ctx) {
  /** @type {Json[]} */
  const items = entry.skipped; // an array: the caller checked
  /** @type {number[]} */
  const ints = [];
  /** @type {Json[]} */
  const named = [];
  for (const x of items) {
    const m = typeof x === "string" ? PASS_NAME.exec(x) : null;
    if (m !== null) ints.push(Number(m[1]));
    else if (isInt(x)) ints.push(x);
    else named.push(x);
  }
  if (deepEqual(ints, items)) return entry;
  const ptr = pointer(["review_audit", key, "skipped"]);
  /** @type {JsonObject} */
  const out = { ...entry, skipped: ints };
  if (items.some((x) => typeof x === "string" && PASS_NAME.test(x))) {
    ctx.note(`review_audit ${key}: skipped pass names converted to pass numbers`, ptr);
  }
  if (named.length) {
    const legacy = legacyOf(out);
    if (has(out, LEGACY) && !isObject(out[LEGACY])) legacy[LEGACY] = out[LEGACY];
    legacy.skipped = named;
    out[LEGACY] = legacy;
    ctx.kept(
      `review_audit ${key}: skipped items ${pyRepr(named)} name no pass; kept as review_audit.${key}.x-legacy.skipped`,
      ptr,
    );
  }
  return out;
}

/** @param {JsonObject} item @returns {string} */
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

/** @param {JsonObject} doc @param {Context} ctx */
export function repairFindings(doc, ctx) {
  const findings = doc.open_findings;
  if (findings === undefined || findings === null) {
    doc.open_findings = [];
    ctx.note("open_findings added (empty)", "/open_findings");
    return;
  }
  if (!Array.isArray(findings)) {
    ctx.aside(doc, "open_findings", findings, "open_findings is not a list", "/open_findings");
    doc.open_findings = [];
    return;
  }
  /** @type {string[]} */
  const out = [];
  /** @type {JsonObject[]} */
  const resolved = [];
  /** @type {JsonObject[]} */
  const converted = [];
  /** @type {string[]} */
  const duplicates = [];
  findings.forEach((item, i) => {
    let text;
    if (typeof item === "string") text = item;
    else if (isObject(item)) {
      if (RESOLVED.includes(String(item.status ?? "").toLowerCase())) {
        resolved.push(item);
        return;
      }
      text = findingText(item);
      converted.push(item);
      ctx.note(`finding object ${i} became the string '${text}'`, pointer(["open_findings", i]));
    } else text = String(item);
    if (text && !out.includes(text)) out.push(text);
    else if (text && typeof item === "string") duplicates.push(text);
  });
  if (converted.length) {
    ctx.aside(
      doc,
      "open_finding_objects",
      converted,
      `${converted.length} open finding object(s) became strings; the original objects hold more than a title`,
      "/open_findings",
    );
  }
  if (duplicates.length) {
    ctx.aside(
      doc,
      "duplicate_findings",
      duplicates,
      `${duplicates.length} open finding(s) repeated an earlier one`,
      "/open_findings",
    );
  }
  if (resolved.length) {
    ctx.aside(
      doc,
      "resolved_findings",
      resolved,
      `${resolved.length} resolved finding object(s) are not open findings`,
      "/open_findings",
    );
  }
  if (!deepEqual(out, findings)) doc.open_findings = out;
}

/** @param {JsonObject} doc @param {Workflow | null} wf @param {Context} ctx */
export function repairDecisions(doc, wf, ctx) {
  let dec = doc.decisions;
  if (dec === undefined || dec === null) {
    dec = doc.decisions = {};
    ctx.note("decisions added", "/decisions");
  }
  if (!isObject(dec)) {
    ctx.aside(doc, "decisions", dec, "decisions is not an object", "/decisions");
    dec = doc.decisions = {};
  }
  if (has(doc, "complexity")) {
    const top = doc.complexity;
    delete doc.complexity;
    if (wf && wf.id === "apex" && !has(dec, "complexity")) {
      dec.complexity = top;
      ctx.note("top-level complexity moved into decisions", "/complexity");
    } else if (wf && wf.id === "apex")
      ctx.aside(doc, "complexity", top, "top-level complexity duplicates decisions", "/complexity");
    else ctx.aside(doc, "complexity", top, "top-level complexity", "/complexity");
  }
  if (!wf) return;
  const enums = Object.fromEntries(
    wf.decisions.filter((d) => d.enum !== undefined && d.enum !== null).map((d) => [d.key, d.enum]),
  );
  const comp = dec.complexity;
  if (enums.complexity && typeof comp === "string" && !enums.complexity.includes(comp)) {
    const mapped = COMPLEXITY[comp.toLowerCase()];
    if (mapped !== undefined && enums.complexity.includes(mapped)) {
      dec.complexity = mapped;
      ctx.note(`complexity '${comp}' mapped to '${mapped}'`, "/decisions/complexity");
    }
  }
  for (const d of wf.decisions) {
    if (d.required && !has(dec, d.key)) {
      dec[d.key] = "";
      ctx.note(
        `required decision '${d.key}' added (empty: not yet decided)`,
        pointer(["decisions", d.key]),
      );
    }
  }
  mirroredFields(doc, dec, wf, ctx);
}

/** A top-level field the workflow keeps twice (mirrors_decision, an upstream ambiguity): fill
 * the empty copy from the other; report a disagreement.
 * @param {JsonObject} doc @param {JsonObject} dec @param {Workflow} wf @param {Context} ctx
 */
function mirroredFields(doc, dec, wf, ctx) {
  for (const f of wf.fields) {
    if (f.mirrors === null) continue;
    const [name, key] = [f.name, f.mirrors];
    const top = doc[name];
    const inner = dec[key];
    if (!(typeof top === "string" && typeof inner === "string" && top !== inner)) continue;
    if (!top) {
      doc[name] = inner;
      ctx.note(`${name} filled from decisions.${key} (${pyRepr(inner)})`, `/${name}`);
    } else if (!inner) {
      dec[key] = top;
      ctx.note(`decisions.${key} filled from ${name} (${pyRepr(top)})`, `/decisions/${key}`);
    } else
      ctx.kept(
        `${name} ${pyRepr(top)} and decisions.${key} ${pyRepr(inner)} disagree; both kept, resolve by hand`,
        `/${name}`,
      );
  }
}

const stepOk = (/** @type {Json} */ step) =>
  step === undefined ||
  step === null ||
  (isInt(step) && step >= 0) ||
  (typeof step === "string" && STEP_KEY.test(step));

/** A decision's step as 3.0 writes it: "3.5" and the number 3.5 are the step key "3_5", 2.0
 * is 2 (docs/spec.md §9.2); anything else moves to x-legacy-step.
 * @param {JsonObject} e
 */
function logStep(e) {
  const step = e.step;
  if (typeof step === "number" && !isInt(step)) {
    if (DOTTED_KEY.test(String(step))) e.step = newKey(String(step));
    else {
      e["x-legacy-step"] = step;
      delete e.step;
    }
  } else if (isInt(step) && step > MAX_STEP) {
    e["x-legacy-step"] = step;
    delete e.step;
  } else if (typeof step === "string" && DOTTED_KEY.test(step)) e.step = newKey(step);
  else if (has(e, "step") && !stepOk(step)) {
    e["x-legacy-step"] = step;
    delete e.step;
  }
}

/** @param {JsonObject} e */
function entryIsV3(e) {
  return (
    ["id", "title", "choice", "rationale"].every((k) => typeof e[k] === "string" && e[k]) &&
    DECISION_ID.test(e.id) &&
    stepOk(e.step) &&
    (!has(e, "timestamp") || parseTimestamp(e.timestamp) !== null)
  );
}

/** @param {JsonObject} doc @param {Context} ctx */
export function repairDecisionLog(doc, ctx) {
  const log = doc.decision_log;
  if (log === undefined || log === null) return;
  if (!Array.isArray(log)) {
    delete doc.decision_log;
    ctx.aside(doc, "decision_log", log, "decision_log is not a list", "/decision_log");
    return;
  }
  const used = log
    .filter((e) => isObject(e) && typeof e.id === "string" && DECISION_ID.test(e.id))
    .map((e) => Number(e.id.slice(1)));
  let next = Math.max(0, ...used) + 1;
  /** @type {JsonObject[]} */
  const out = [];
  let changed = false;
  log.forEach((entry, i) => {
    const ptr = pointer(["decision_log", i]);
    if (!isObject(entry)) {
      ctx.aside(doc, `decision_log_${i}`, entry, `decision_log[${i}] is not an object`, ptr);
      changed = true;
      return;
    }
    const e = clone(entry);
    if (entryIsV3(e)) {
      out.push(e);
      return;
    }
    if (!(typeof e.id === "string" && DECISION_ID.test(e.id))) {
      if (has(e, "id")) e["x-legacy-id"] = e.id;
      e.id = `D${String(next++).padStart(3, "0")}`;
      ctx.note(`decision_log[${i}] given id ${e.id}`, ptr);
    }
    toEntryShape(e);
    logStep(e);
    const ts = e.timestamp;
    if (ts !== undefined && ts !== null) {
      const [norm, ok] = tsValue(ts);
      if (!ok || norm === null) {
        e["x-legacy-timestamp"] = ts;
        delete e.timestamp;
      } else if (norm !== ts) e.timestamp = norm;
    }
    if (!deepEqual(e, entry)) {
      ctx.note(`decision_log[${i}] converted to the ${VERSION} entry shape`, ptr);
      changed = true;
    }
    out.push(e);
  });
  if (changed) doc.decision_log = out;
}

/** title, choice, rationale from the apex-recall {decision, rationale, step, timestamp} and the
 * docs-site {key, value, reason} shapes (docs/spec.md §9.2).
 * @param {JsonObject} e
 */
function toEntryShape(e) {
  if (!has(e, "title")) {
    const title = e.decision || e.key;
    if (typeof title === "string" && title.trim()) e.title = title.trim().slice(0, 120);
  }
  if (!has(e, "choice")) {
    let choice;
    if (has(e, "decision")) {
      choice = e.decision;
      delete e.decision;
    } else {
      choice = e.value;
      delete e.value;
    }
    if (choice !== undefined && choice !== null)
      e.choice = typeof choice === "string" ? choice : String(choice);
  }
  if (!has(e, "rationale")) {
    const reason = e.reason;
    delete e.reason;
    e.rationale = typeof reason === "string" && reason ? reason : "(not recorded)";
  }
  if (has(e, "key") && e.title === e.key) delete e.key;
  for (const req of ["title", "choice", "rationale"]) {
    if (typeof e[req] === "string" && e[req]) continue;
    if (e[req] !== undefined && e[req] !== null && e[req] !== "") e[`x-legacy-${req}`] = e[req]; // not a string: kept beside
    e[req] = "(not recorded)";
  }
}
