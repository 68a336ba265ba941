// The write service (spec §4, §7): the atomic save and the write moments, as the reference's
// `session-resume init|start|checkpoint|complete|skip|decide|finding|review-audit|transition`
// do them. Every write: load, check, build the whole new document (transitions.mjs), acquire
// the lease if needed (lease.mjs), save under the lock (revision check, validation, temp file,
// .bak rotation, replace, directory fsync, one worklog event), refresh the heartbeat. The
// session commands (`session start|end`, `ping`) are lease.mjs's.

import { join, relative, sep } from "node:path";
import { ArchiveError, archiveSession } from "./archive.mjs";
import { CODES, severity } from "./codes.mjs";
import {
  acquire,
  LeaseChanged,
  makeDir,
  MAX_ATTEMPTS,
  noLeaseLeftOnFailure,
  planFor,
  refresh,
} from "./lease.mjs";
import { withLock } from "./lock.mjs";
import { startedAtGate } from "./resume.mjs";
import { appendEvent, readTail, SENTINEL, STATE, WORKLOG } from "./session.mjs";
import { BAK, checkPaths, load, Refused, replaceState, serialize } from "./store.mjs";
import * as T from "./transitions.mjs";
import { formatTimestamp } from "./timeutil.mjs";
import { validateDocument } from "./validate.mjs";
import { loadWorkflow, templateState, WorkflowError } from "./workflow.mjs";
import { stateWorkflowRefusal, stateWorkflowSpec } from "./config.mjs";
import { pyRepr, shellQuote } from "./findings.mjs";
import { fail, WriteError } from "./writeerror.mjs";

// the refusal, where the write service's callers have found it
export { WriteError } from "./writeerror.mjs";

const LEASE_TAIL_EVENTS = 200;

/**
 * @typedef {import("./types.js").Problem} Problem
 * @typedef {import("./types.js").StateDocument} StateDocument
 */
/**
 * @typedef {import("./types.js").JsonObject} JsonObject
 * @typedef {import("./types.js").Workflow} Workflow
 */
/**
 * @typedef {import("./types.js").WorklogEvent} WorklogEvent
 * @typedef {import("./types.js").Loaded} Loaded
 * @typedef {import("./lease.mjs").Context} Context
 * @typedef {import("./lease.mjs").LeasePlan} LeasePlan
 */

/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Refuse (SR161) a document that is not a valid state (spec §4 step 3); else its bytes.
 * @param {string} dir @param {StateDocument} doc
 * @param {{now: number, workflow?: string|null}} opts
 * @returns {ReturnType<typeof serialize>}
 */
function refuseInvalid(dir, doc, opts) {
  const data = serialize(doc);
  const errors = validateDocument(data, {
    workflow: opts.workflow ?? undefined,
    now: opts.now,
    sessionDir: dir,
  }).filter((code) => severity(code) === "error");
  if (errors.length) {
    throw new WriteError(
      errors.map((code) => ({
        code: "SR161",
        message: `refusing to write an invalid state: ${code}`,
        file: join(dir, STATE),
      })),
    );
  }
  return data;
}

/**
 * Write `doc` as the session's state: one whole-document atomic write under the lock.
 * `expectedRevision`: the revision the caller read (SR162 when the file has another).
 * @param {string} dir @param {StateDocument} doc
 * @param {{now: number, root?: string|null, expectedRevision?: number|null, workflow?: string|null,
 *   event?: string|null, step?: string|null, subStep?: string|null,
 *   detail?: Record<string, unknown>|null, session?: string, allow?: string[]}} opts
 * @returns {{document: StateDocument, revision: number, event: WorklogEvent|null}}
 */
export function save(dir, doc, opts) {
  const root = opts.root ?? dir;
  const state = join(dir, STATE);
  try {
    checkPaths(dir, root);
  } catch (err) {
    if (err instanceof Refused)
      throw new WriteError(err.codes.map((code) => ({ code, message: err.message, file: state })));
    throw err;
  }
  return withLock(dir, () => {
    const current = load(dir, root);
    if (current.status === "absent" && current.backupUsable) {
      throw fail(
        "SR161",
        "the state file is missing but .bak holds a valid state; run `session-resume recover` first",
        state,
      );
    }
    const allow = opts.allow ?? ["ok", "absent", "invalid"];
    if (!allow.includes(current.status)) {
      const what = current.status === "needs_migration" ? "migrate" : "recover";
      throw new WriteError(
        current.codes.length
          ? current.codes.map((code) => ({
              code,
              message: `the state file is ${current.status}`,
              file: state,
            }))
          : [
              {
                code: "SR161",
                message: `the state file is ${current.status}; run \`session-resume ${what}\` first`,
                file: state,
              },
            ],
      );
    }
    const onDisk =
      ["ok", "invalid"].includes(current.status) && Number.isInteger(current.doc?.revision)
        ? current.doc?.revision
        : 0;
    const expected = opts.expectedRevision ?? null;
    if (expected !== null && expected !== onDisk) {
      throw fail(
        "SR162",
        `the state is at revision ${onDisk}, not ${expected}: another writer saved first; reload and retry`,
        state,
      );
    }
    const out = structuredClone(doc);
    out.updated = formatTimestamp(opts.now);
    out.revision = onDisk + 1;
    const data = refuseInvalid(dir, out, opts);
    try {
      replaceState(dir, data, { rotate: true, currentValid: current.status === "ok" });
    } catch (err) {
      if (err instanceof Refused)
        throw new WriteError(
          err.codes.map((code) => ({ code, message: err.message, file: state })),
        );
      throw err;
    }
    let record = null;
    if (opts.event) {
      try {
        record = appendEvent(dir, opts.event, {
          ts: formatTimestamp(opts.now),
          session: opts.session ?? "",
          step: opts.step ?? null,
          subStep: opts.subStep ?? null,
          detail: opts.detail ?? null,
        });
      } catch (err) {
        throw fail(
          "SR505",
          `the state was written (revision ${out.revision}) but its worklog event could not be appended: ${/** @type {Error} */ (err).message}`,
          join(dir, WORKLOG),
        );
      }
    }
    return { document: out, revision: out.revision, event: record };
  });
}

/** The spec each workflow was loaded by (a configured file's path: its id names no file).
 * @type {WeakMap<Workflow, string>} */
const SPECS = new WeakMap();
/** @param {Workflow} wf */
const specOf = (wf) => SPECS.get(wf) ?? wf.id;

/**
 * @param {StateDocument | null} doc
 * @param {string|null} spec
 * @param {string} fallback
 * @returns {Workflow}
 */
function workflowOf(doc, spec, fallback) {
  const own = doc ? doc.workflow : undefined;
  // a built-in, or the configured workflow (`fallback`) by its id; never a path
  const name = spec || stateWorkflowSpec(own ?? null, fallback);
  // a workflow that cannot be used (SR400-SR403) is an input error: exit 2, as in every
  // command, in the reference's words, file and place
  if (name === null) {
    const refusal = { code: "SR403", message: stateWorkflowRefusal(own), file: "" };
    throw new WriteError([{ ...refusal, pointer: "/workflow" }], 2);
  }
  try {
    const wf = loadWorkflow(name);
    SPECS.set(wf, name);
    return wf;
  } catch (err) {
    if (err instanceof WorkflowError) throw new WriteError(err.diagnostics, 2);
    throw err;
  }
}

/** SR161 (with the right advice) unless the loaded state may be changed.
 * @param {Context} ctx
 * @param {Loaded} loaded
 * @returns {asserts loaded is Loaded & {status: "ok"}}
 */
function refuseUnwritable(ctx, loaded) {
  if (loaded.status === "ok") return;
  const f = join(ctx.dir, STATE);
  const d = ctx.dir;
  if (loaded.status === "absent" && loaded.backupUsable) {
    throw fail(
      "SR161",
      `the state file is missing but ${BAK} is a valid state; run \`session-resume recover ${d}\` to restore it (nothing was written)`,
      f,
    );
  }
  /** @type {Record<string, string>} */
  const messages = {
    absent: `there is no state file in ${d}; run \`session-resume init PROJECT${ctx.initWorkflow ? ` --workflow ${shellQuote(ctx.initWorkflow)}` : ""}\` first`,
    needs_migration: `the state file is schema version ${loaded.version}; run \`session-resume migrate ${d}\` first (nothing was written)`,
    corrupt: `the state file is corrupt; run \`session-resume recover ${d}\` first (it restores ${loaded.backupUsable ? ".bak" : "a fresh state"})`,
    too_new: `the state file is schema version ${loaded.version}, newer than this tool knows; upgrade session-resume (nothing was written)`,
    invalid: `the state file does not match the current schema; fix the problems \`session-resume validate ${d}\` lists (nothing was written)`,
    bad_version:
      "the state file's schema_version is not a known version; fix it by hand (nothing was written)",
    refused: "refusing to use this session directory (nothing was written)",
  };
  throw new WriteError([
    {
      code: "SR161",
      message: messages[loaded.status] ?? `the state file is ${loaded.status}`,
      file: f,
    },
    // what the reader found, in the reference's words and places where the store kept them
    ...(loaded.found?.length
      ? loaded.found.map((x) => ({
          code: x.code,
          message: x.message,
          file: f,
          pointer: x.pointer,
          line: x.line ?? null,
          column: x.column ?? null,
        }))
      : loaded.codes.map((/** @type {string} */ code) => ({
          code,
          message: CODES[code]?.summary ?? code,
          file: f,
        }))),
  ]);
}

/**
 * @typedef {{revision: number, document: StateDocument, session: string, event: WorklogEvent|null,
 *   events: WorklogEvent[], step: string|null, lease: LeasePlan["action"],
 *   previousSession: string|null,
 *   attempts: number, warnings: import("./types.js").Found[], archivedTo?: string|null}}
 *   WriteResult
 */

/**
 * Load, check, build, acquire the lease, save (one write, one event), refresh the heartbeat;
 * retried from the load when another writer saved first.
 * @param {Context} ctx
 * @param {(doc: StateDocument, wf: Workflow, orphaned: boolean) =>
 *   {document: StateDocument, event: string,
 *   step?: string|null, subStep?: string|null, detail?: Record<string, unknown>|null,
 *   warnings?: import("./types.js").Found[]}} build
 * @returns {WriteResult}
 */
export function writeState(ctx, build) {
  return noLeaseLeftOnFailure(ctx, () => writeOnce(ctx, build));
}

/** @param {Context} ctx @param {Parameters<typeof writeState>[1]} build @returns {WriteResult} */
function writeOnce(ctx, build) {
  const root = ctx.root ?? ctx.dir;
  const sentinelPath = join(ctx.dir, SENTINEL);
  /** @type {WorklogEvent[]} */
  let before = [];
  /** @type {LeasePlan | null} */
  let acquired = null;
  let orphanSeen = false;
  /** @type {Problem[]} */
  let conflict = [];
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const loaded = load(ctx.dir, root);
    refuseUnwritable(ctx, loaded);
    const wf = workflowOf(loaded.doc, null, ctx.defaultWorkflow ?? "apex");
    const plan = planFor(ctx, { file: sentinelPath });
    const orphaned = orphanSeen || plan.orphaned;
    let change;
    try {
      change = build(loaded.doc, wf, orphaned);
    } catch (err) {
      if (err instanceof T.TransitionError) {
        throw new WriteError(err.problems.map((p) => ({ ...p, file: join(ctx.dir, STATE) })));
      }
      throw err;
    }
    if (plan.action !== "keep") {
      // every check that can refuse the write comes before the lease is taken: a refused
      // write writes nothing (spec §7, "Refused writes")
      const next = structuredClone(change.document);
      next.updated = formatTimestamp(ctx.now);
      next.revision = (loaded.doc.revision ?? 0) + 1;
      refuseInvalid(ctx.dir, next, { now: ctx.now, workflow: specOf(wf) });
      try {
        before = [
          ...before,
          ...acquire(ctx, plan, { logStart: true, implicit: (ctx.session ?? null) === null }),
        ];
      } catch (err) {
        if (err instanceof LeaseChanged) continue;
        throw err;
      }
      acquired = plan;
      orphanSeen = orphanSeen || plan.orphaned;
    }
    let res;
    try {
      res = save(ctx.dir, change.document, {
        now: ctx.now,
        root,
        expectedRevision: loaded.doc.revision ?? 0,
        workflow: specOf(wf),
        event: change.event,
        step: change.step ?? null,
        subStep: change.subStep ?? null,
        detail: change.detail ?? null,
        session: plan.session,
      });
    } catch (err) {
      if (err instanceof WriteError && err.codes.length === 1 && err.codes[0] === "SR162") {
        conflict = err.problems;
        continue;
      }
      throw err;
    }
    refresh(ctx, plan.session);
    return {
      revision: res.revision,
      document: res.document,
      session: plan.session,
      event: res.event,
      events: [...before, ...(res.event ? [res.event] : [])],
      step: change.step ?? null,
      lease: acquired ? acquired.action : "keep",
      previousSession:
        acquired && ["takeover", "adopt"].includes(acquired.action)
          ? (acquired.lease.sentinel?.session ?? null)
          : null,
      attempts: attempt,
      // what the write left unrecorded (SR716, SR717): written anyway
      warnings: (change.warnings ?? []).map((w) => ({ ...w, file: join(ctx.dir, STATE) })),
    };
  }
  throw new WriteError([
    ...conflict,
    {
      code: "SR162",
      message: `gave up after ${MAX_ATTEMPTS} attempts: other writers keep changing the state; run the command again`,
      file: join(ctx.dir, STATE),
    },
  ]);
}

/**
 * Create the session's state from the workflow template (revision 1). An existing state is
 * refused (SR710) unless `fresh`: then the old files are archived first (lib/archive.mjs;
 * the lease stays, `archiveKeep` archives kept).
 * @param {Context} ctx @param {string} project
 * @param {{workflow?: string|null, fresh?: boolean}} [opts]
 * @returns {WriteResult}
 */
export function init(ctx, project, { workflow = null, fresh = false } = {}) {
  return noLeaseLeftOnFailure(ctx, () => initOnce(ctx, project, workflow, fresh));
}

/**
 * @param {Context} ctx
 * @param {string} project
 * @param {string|null} workflow
 * @param {boolean} fresh
 * @returns {WriteResult}
 */
function initOnce(ctx, project, workflow, fresh) {
  const state = join(ctx.dir, STATE);
  const wf = workflowOf(null, workflow, ctx.defaultWorkflow ?? "apex");
  let doc;
  try {
    doc = T.initState(wf, project, ctx.now, templateState);
  } catch (err) {
    if (err instanceof T.TransitionError)
      throw new WriteError(err.problems.map((p) => ({ ...p, file: state })));
    throw err;
  }
  makeDir(ctx);
  const root = ctx.root ?? ctx.dir;
  const loaded = load(ctx.dir, root);
  if (loaded.status === "refused") refuseUnwritable(ctx, loaded);
  const plan = planFor(ctx);
  if (!fresh && loaded.status === "absent" && loaded.backupUsable) {
    // a later save would rotate the new state over the only good copy of the old one
    throw fail(
      "SR710",
      `${state} is missing but ${BAK} holds a valid state; restore it with \`session-resume recover ${ctx.dir}\`, or start over with \`session-resume init ${project} --fresh\` (it is archived, not deleted)`,
      state,
    );
  }
  if (!fresh && loaded.status !== "absent") {
    const what =
      loaded.status === "ok"
        ? `revision ${loaded.doc.revision ?? 0}, project ${pyRepr(loaded.doc.project)}`
        : loaded.status;
    throw fail(
      "SR710",
      `${state} already exists (${what}); to continue it run \`session-resume resume ${ctx.dir}\`, or start over with \`session-resume init ${project} --fresh\` (the old files are archived under .archive/, nothing is deleted)`,
      state,
    );
  }
  /** @type {string | null} */
  let archived = null;
  if (fresh) {
    const old = loaded.status === "ok" ? loaded.doc.project : undefined;
    try {
      archived = archiveSession(ctx.dir, {
        now: ctx.now,
        keep: ctx.archiveKeep ?? 5,
        label: typeof old === "string" ? old : project,
        root,
      });
    } catch (err) {
      if (err instanceof ArchiveError) throw new WriteError(err.problems);
      throw err;
    }
  }
  /** @type {WorklogEvent[]} */
  let before = [];
  if (plan.action !== "keep") {
    try {
      before = acquire(ctx, plan, { logStart: false, implicit: (ctx.session ?? null) === null });
    } catch (err) {
      if (err instanceof LeaseChanged)
        throw fail(
          "SR511",
          "another session changed the lease while this init ran; nothing was written, run it again",
          state,
        );
      throw err;
    }
  }
  /** @type {Record<string, string>} */
  const detail = { note: "init", project, workflow: wf.id };
  if (archived !== null) detail.archived_to = relative(ctx.dir, archived).split(sep).join("/");
  // a session that already held the lease has logged its start (an adoption logs its own);
  // a fresh worklog logs it again
  const event =
    (plan.action === "keep" || plan.action === "adopt") && archived === null
      ? "note"
      : "session_start";
  const res = save(ctx.dir, doc, {
    now: ctx.now,
    root,
    expectedRevision: 0,
    workflow: specOf(wf),
    event,
    detail,
    session: plan.session,
  });
  refresh(ctx, plan.session);
  return {
    revision: res.revision,
    document: res.document,
    session: plan.session,
    event: res.event,
    events: [...before, ...(res.event ? [res.event] : [])],
    step: null,
    lease: plan.action,
    previousSession:
      plan.action === "takeover" || plan.action === "adopt"
        ? (plan.lease.sentinel?.session ?? null)
        : null,
    attempts: 1,
    warnings: [],
    archivedTo: archived,
  };
}

// --- the write moments (builds as the reference's, event details included) ----------------

/**
 * Moment 1, a step starts.
 * @param {Context} ctx
 * @param {string} key
 * @param {{force?: boolean, name?: string|null}} [opts]
 */
export const startStep = (ctx, key, { force = false, name = null } = {}) => {
  // a step handed over at a gate (transition) that recorded nothing since starts without
  // costing an attempt, even after an orphan (spec §4, §10 SR712)
  const handover = startedAtGate(readTail(ctx.dir, LEASE_TAIL_EVENTS).events, key);
  return writeState(ctx, (doc, wf, orphaned) => {
    const steps = isObject(doc.steps) ? doc.steps : {};
    const oldStatus = isObject(steps[key]) ? steps[key].status : null;
    const untouched = handover && isObject(steps[key]) && steps[key].sub_step === null;
    const restartOrphan = orphaned && oldStatus === "in_progress" && !untouched;
    const document = T.start(doc, wf, key, ctx.now, { force, orphaned: restartOrphan, name });
    /** @type {Record<string, unknown>} */
    const detail = { attempts: document.steps[key].attempts ?? null };
    if (oldStatus === "in_progress" && untouched) detail.handover = true;
    else if (oldStatus === "in_progress") detail.restart = true;
    if (restartOrphan) detail.orphaned = true;
    if (oldStatus === "complete" || oldStatus === "skipped") detail.rerun = oldStatus;
    const interrupted = Object.keys(steps).filter(
      (k) => k !== key && isObject(steps[k]) && steps[k].status === "in_progress",
    );
    if (interrupted.length) detail.interrupted = interrupted;
    if (force) detail.forced = true;
    return { document, event: "step_start", step: key, detail };
  });
};

/**
 * Moment 2, a sub-step checkpoint.
 * @param {Context} ctx
 * @param {string} key
 * @param {string} subStep
 * @param {{artifacts?: string[], contextFiles?: string[]}} [opts]
 */
export const checkpointStep = (ctx, key, subStep, { artifacts = [], contextFiles = [] } = {}) =>
  writeState(ctx, (doc, wf) => {
    // the session directory relative to the repository: every listed path in its one form
    const rel = ctx.root ? relative(ctx.root, ctx.dir).split(sep).join("/") : null;
    const base = rel === null || rel.startsWith("..") ? null : rel || ".";
    const document = T.checkpoint(doc, wf, key, subStep, { artifacts, contextFiles, base });
    const written = document.steps[key].sub_step;
    /** @type {Record<string, unknown>} */
    const detail = {};
    if (artifacts.length) detail.artifacts = [...artifacts];
    if (contextFiles.length) detail.context_files = [...contextFiles];
    if (written !== subStep) detail.legacy_id = subStep;
    return {
      document,
      event: "checkpoint",
      step: key,
      subStep: written,
      detail: Object.keys(detail).length ? detail : null,
    };
  });

/** Moment 3, a step is done. @param {Context} ctx @param {string} key */
export const completeStep = (ctx, key) =>
  writeState(ctx, (doc, wf) => ({
    document: T.complete(doc, wf, key, ctx.now),
    event: "step_complete",
    step: key,
    warnings: T.completionGaps(doc, wf, key),
  }));

/**
 * Skip a pending or in-progress step.
 * @param {Context} ctx
 * @param {string} key
 * @param {string} reason
 * @param {{force?: boolean}} [opts]
 */
export const skipStep = (ctx, key, reason, { force = false } = {}) =>
  writeState(ctx, (doc, wf) => {
    /** @type {Record<string, unknown>} */
    const detail = { reason };
    if (force) detail.forced = true;
    return {
      document: T.skip(doc, wf, key, reason, { force }),
      event: "step_skip",
      step: key,
      detail,
    };
  });

/**
 * Moment 4, a decision: decisions[key] = value.
 * @param {Context} ctx
 * @param {string} key
 * @param {unknown} value
 */
export const decide = (ctx, key, value) =>
  writeState(ctx, (doc, wf) => {
    const document = T.setDecision(doc, wf, key, value);
    /** @type {Record<string, unknown>} */
    const detail = { key, value };
    const old = isObject(doc.decisions) ? doc.decisions : {};
    if (Object.hasOwn(old, key)) detail.previous = old[key];
    return { document, event: "decision", detail };
  });

/**
 * Moment 4, a logged decision (decision_log).
 * @param {Context} ctx
 * @param {{title: string, choice: string, rationale: string, step?: string|null,
 *   alternatives?: string[]}} entry
 */
export const logDecision = (ctx, entry) =>
  writeState(ctx, (doc, wf) => {
    const document = T.logDecision(doc, entry, ctx.now, wf);
    const added = document.decision_log[document.decision_log.length - 1];
    return {
      document,
      event: "decision",
      step: entry.step ?? null,
      detail: { id: added.id, title: entry.title, choice: entry.choice },
    };
  });

/**
 * Moment 5, a review finding opened or resolved.
 * @param {Context} ctx
 * @param {"add"|"resolve"} action
 * @param {string} title
 */
export const finding = (ctx, action, title) =>
  writeState(ctx, (doc) => {
    if (action === "add") {
      /** @type {Record<string, unknown>} */
      const detail = { title };
      if (Array.isArray(doc.open_findings) && doc.open_findings.includes(title))
        detail.already_open = true;
      return { document: T.addFinding(doc, title), event: "finding_add", detail };
    }
    return { document: T.resolveFinding(doc, title), event: "finding_resolve", detail: { title } };
  });

/**
 * Moment 6, a challenger review run: `review_audit.step_<key>` set (worklog `review_audit`).
 * @param {Context} ctx @param {string} key @param {T.ReviewAudit} audit
 */
export const reviewAudit = (ctx, key, audit) =>
  writeState(ctx, (doc, wf) => {
    const document = T.reviewAudit(doc, wf, key, audit);
    const entry = document.review_audit[`step_${key}`];
    /** @type {Record<string, unknown>} */
    const detail = {};
    for (const k of ["complexity", "passes_planned", "passes_executed"])
      detail[k] = entry[k] ?? null;
    detail.skipped = [...(entry.skipped ?? [])];
    return { document, event: "review_audit", step: key, detail };
  });

/**
 * An orchestrator gate in one write.
 * @param {Context} ctx
 * @param {string} completeKey
 * @param {string} startKey
 * @param {Record<string, unknown>} decisions
 * @param {{force?: boolean}} [opts]
 */
export const transition = (ctx, completeKey, startKey, decisions, { force = false } = {}) =>
  writeState(ctx, (doc, wf) => {
    const document = T.transition(doc, wf, completeKey, startKey, decisions, ctx.now, { force });
    /** @type {Record<string, unknown>} */
    const detail = {
      completed: completeKey,
      decisions,
      attempts: document.steps[startKey].attempts ?? null,
    };
    if (force) detail.forced = true;
    const warnings = T.completionGaps(doc, wf, completeKey, document);
    return { document, event: "step_start", step: startKey, detail, warnings };
  });

/**
 * The user approved the gate of complete step `key`, with `decisions` (spec §4.1): event
 * `gate_approved`. The package renders no handoff (the reference's toolchain does).
 * @param {Context} ctx @param {string} key @param {Record<string, unknown>} decisions
 */
export const approve = (ctx, key, decisions) =>
  writeState(ctx, (doc, wf) => {
    const document = T.approveGate(doc, wf, key, decisions, ctx.now);
    const entry = /** @type {Record<string, unknown>} */ (document.decision_log.at(-1));
    /** @type {Record<string, unknown>} */
    const detail = { gate: entry.gate, decision: entry.id };
    if (Object.keys(decisions).length) detail.decisions = { ...decisions };
    return { document, event: "gate_approved", step: key, detail };
  });
