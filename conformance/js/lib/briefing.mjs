// The briefing of the resume decision (docs/spec.md §10): everything a fresh agent needs from
// the state, so that it never opens the raw JSON, and which files to read now (`load`, within
// the step's budget: partial deliverables first, then startup inputs) or not (`skip`, each with
// its reason). Pure: the file facts come in. Mirrors Python's core/briefing.py.

const LOG_ENTRIES = 5; // the last decision_log entries shown
const EVENTS = 5; // the last worklog events shown
// Startup inputs the briefing replaces: a fresh agent reads the briefing instead.
export const STATE_FILES = ["00-session-state.json", "00-handoff.md"];

const WHY_PARTIAL = "partial deliverable of this step: continue it";
const WHY_INPUT = "startup input of this step (workflow budget)";
const SKIP_STATE = "the briefing carries it";
const SKIP_MISSING = "listed but not on disk";
const FRESH = ["start", "restart_step", "offer_rerun", "continue_step"];
// The actions that work on a step now: its files to read are listed.
const WORKING = ["start", "restart_step", "resume_from_checkpoint", "continue_step"];

/**
 * @typedef {import("./types.js").StateDocument} StateDocument
 * @typedef {import("./types.js").JsonObject} JsonObject
 */
/**
 * @typedef {import("./types.js").Workflow} Workflow
 * @typedef {import("./types.js").StepDef} StepDef
 */
/** @typedef {import("./types.js").Briefing} Briefing */

/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * @param {StepDef | null} def
 * @param {string | null} id
 * @returns {import("./types.js").Checkpoint | null}
 */
const checkpoint = (def, id) =>
  id === null ? null : { id, after: def ? (def.after[id] ?? null) : null };

/** The deliverables of `def` that exist once `sub` is recorded: written at it or at an earlier
 * checkpoint (none for a `sub` that is not a checkpoint) (core/workflow.py `deliverables_due`).
 * @param {import("./types.js").StepDef} def @param {string | null} sub
 */
export function deliverablesDue(def, sub) {
  const reached = sub === null ? -1 : def.checkpoints.indexOf(sub);
  if (reached < 0) return [];
  return def.deliverables.filter((d) => def.checkpoints.indexOf(d.writtenAt) <= reached);
}

/** @param {string | null} sessionRel @param {string} name */
export const sessionPath = (sessionRel, name) =>
  sessionRel !== null && sessionRel !== "" && sessionRel !== "." ? `${sessionRel}/${name}` : name;

/**
 * The briefing for step `key` (null: no step) of the usable state `doc`. `exists`: whether a
 * path exists, for the step's artifacts (repository-relative) and its startup inputs (relative
 * to the session directory). `sessionRel`: the session directory relative to the repository
 * root, so that every path given is repository-relative.
 * @param {StateDocument} doc @param {string|null} key @param {Workflow} wf
 * @param {{action: string, exists: Record<string, boolean>, events: JsonObject[],
 *   sessionRel: string|null}} o
 * @returns {Briefing}
 */
export function build(doc, key, wf, { action, exists, events, sessionRel }) {
  const steps = isObject(doc.steps) ? doc.steps : {};
  const st = key !== null && isObject(steps[key]) ? steps[key] : {};
  const def = key !== null ? wf.step(key) : null;
  const log = Array.isArray(doc.decision_log) ? doc.decision_log : [];
  const audit = isObject(doc.review_audit) ? doc.review_audit : {};
  const artifacts = (Array.isArray(st.artifacts) ? st.artifacts : [])
    .filter((/** @type {unknown} */ p) => typeof p === "string")
    .map((/** @type {string} */ p) => ({ path: p, exists: exists[p] === true }));
  /** @type {string[]} */
  const ids = def ? def.checkpoints : [];
  let sub = typeof st.sub_step === "string" ? st.sub_step : null;
  if (FRESH.includes(action)) sub = null;
  /** @type {string | null} */
  let next = null;
  // a complete step (offer_rerun) has no next checkpoint: nothing is next
  if (sub === null)
    next = ids.length && FRESH.includes(action) && action !== "offer_rerun" ? ids[0] : null;
  else if (ids.includes(sub)) next = ids[ids.indexOf(sub) + 1] ?? null;
  const inProgress = st.status === "in_progress";
  const [load, skip] = loadAndSkip(def, artifacts, exists, sessionRel, action, sub, inProgress);
  return {
    step: key,
    optional: def ? def.optional : false,
    decisions: isObject(doc.decisions) ? { ...doc.decisions } : {},
    open_findings: Array.isArray(doc.open_findings) ? [...doc.open_findings] : [],
    decision_log: log.filter(isObject).slice(-LOG_ENTRIES),
    review_audit: key !== null ? (audit[`step_${key}`] ?? null) : null,
    review_audited: def ? def.reviewed : false,
    artifacts,
    last_checkpoint: checkpoint(def, sub),
    next_checkpoint: checkpoint(def, next),
    last_events: events.slice(-EVENTS).map((e) => ({ ...e })),
    load,
    skip,
  };
}

/** load: the step's existing artifacts and deliverables (while it is in progress), then its startup inputs, at
 * most the budget's max_startup_files (the briefing takes the state file's place); skip: the
 * rest, each with why.
 * @param {StepDef | null} def @param {Briefing["artifacts"]} artifacts
 * @param {Record<string, boolean>} exists @param {string | null} sessionRel @param {string} action
 * @param {string | null} sub the recorded checkpoint (continuing)
 * @param {boolean} inProgress the step's status is in_progress
 * @returns {[Briefing["load"], Briefing["skip"]]}
 */
function loadAndSkip(def, artifacts, exists, sessionRel, action, sub, inProgress) {
  /** @type {Briefing["load"]} */
  const load = [];
  /** @type {Briefing["skip"]} */
  const skip = [];
  const working = WORKING.includes(action);
  // A draft on disk is read and continued, recorded with `--artifact` or not: a fresh agent
  // that never saw it would write the step's deliverable over it.
  if (working && inProgress) {
    for (const a of artifacts) {
      if (a.exists) load.push({ path: a.path, why: WHY_PARTIAL });
      else skip.push({ path: a.path, reason: SKIP_MISSING });
    }
    // the workflow's deliverables its recorded checkpoint says exist, unless listed above
    const listed = new Set([...load, ...skip].map((e) => e.path));
    for (const d of def ? deliverablesDue(def, sub) : []) {
      const path = sessionPath(sessionRel, d.file);
      if (listed.has(path)) continue;
      if (exists[d.file] === true) load.push({ path, why: WHY_PARTIAL });
      else skip.push({ path, reason: SKIP_MISSING });
    }
    // the step's other deliverables already on disk: drafts, continued like a recorded one
    const loaded = new Set(load.map((e) => e.path));
    for (const d of def ? def.deliverables : []) {
      const path = sessionPath(sessionRel, d.file);
      if (loaded.has(path) || exists[d.file] !== true) continue;
      load.push({ path, why: WHY_PARTIAL });
      loaded.add(path);
    }
  }
  if (!def?.budget || !working) return [load, skip];
  const { max, files } = def.budget;
  const capacity = max;
  for (const name of files) {
    const path = sessionPath(sessionRel, name);
    if (STATE_FILES.includes(name)) {
      skip.push({ path, reason: SKIP_STATE }); // replaced by the briefing: never counts against the budget
      continue;
    }
    if (exists[name] !== true) {
      skip.push({ path, reason: SKIP_MISSING });
      continue;
    }
    if (load.length >= Math.max(capacity, 0)) {
      skip.push({
        path,
        reason: `over the step's budget of ${capacity} startup files (the files above come first); open it only if they leave a question it answers`,
      });
      continue;
    }
    load.push({ path, why: WHY_INPUT });
  }
  return [load, skip];
}
