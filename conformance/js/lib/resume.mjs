// The resume decision (spec §10): read the session directory into a snapshot, then decide
// (a pure function of the snapshot, the step asked for, now, the workflow and the options).
// The result follows schema/decision/2.json.

import { statSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { build, deliverablesDue, sessionPath } from "./briefing.mjs";
import {
  buildPlan,
  CONSENT,
  cmd,
  endWhen,
  gateAfter,
  gateDecisions,
  approvedWhen,
  nextStepOf,
  isWriter,
  planAlternatives,
  planCommands,
  SESSION_END,
  SESSION_START,
  AFTER_SESSION_START,
  WORKING,
} from "./plan.mjs";
import { isWithin, real } from "./files.mjs";
import { repairCommand } from "./migrate.mjs";
import { explain } from "./resumemessages.mjs";
import { orderedKeys, pathProblem } from "./rules.mjs";
import { endedIn, leaseState, readLease, readTail, tempFiles } from "./session.mjs";
import { load } from "./store.mjs";
import { templateState } from "./workflow.mjs";
import { tsValue } from "./migration/values.mjs";
import { formatTimestamp, parseTimestamp } from "./timeutil.mjs";

/**
 * @typedef {import("./types.js").StateDocument} StateDocument
 * @typedef {import("./types.js").JsonObject} JsonObject
 */
/**
 * @typedef {import("./types.js").Workflow} Workflow
 * @typedef {import("./types.js").Snapshot} Snapshot
 */
/** @typedef {import("./types.js").Decision} Decision */
/** @typedef {{session?: string | null, staleSeconds: number, takeover?: boolean}} DecideOptions */

const OLD_STATE_SECONDS = 7 * 24 * 3600;
const TAIL_EVENTS = 200;
/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Everything decide() needs from the directory. `ownerAlive` is given, never probed here.
 * @param {string} dir @param {string} root @param {boolean | null} ownerAlive @returns {Snapshot}
 */
export function snapshot(dir, root, ownerAlive) {
  const loaded = load(dir, root);
  const { lease } = readLease(dir);
  const tail = readTail(dir, TAIL_EVENTS);
  const ended = lease !== null && endedIn(tail.events, lease.session);
  const doc = loaded.status === "ok" ? loaded.doc : null;
  /** @type {Snapshot["mtimes"]} */
  const mtimes = {};
  if (doc && isObject(doc.steps)) {
    for (const st of Object.values(doc.steps)) {
      // every step's: the briefing says which exist
      if (!isObject(st) || !Array.isArray(st.artifacts)) continue;
      // Untrusted paths: an absolute or ../ path must not make resume reveal whether a file
      // outside the repository exists (it counts as missing).
      for (const p of st.artifacts)
        mtimes[p] = typeof p === "string" && pathProblem(p) === null ? mtime(root, dir, p) : null;
    }
  }
  return {
    status: loaded.status,
    doc,
    codes: [...new Set(loaded.codes)],
    backupUsable: loaded.backupUsable,
    repair: repairOf(loaded, dir),
    lease,
    ended,
    ownerAlive,
    lastEvents: tail.events.slice(-10),
    mtimes,
    tempFiles: tempFiles(dir),
    sessionRel: relativeTo(root, dir),
    files: {}, // the startup inputs that exist: sessionFiles(), once the workflow is known
  };
}

/** The session directory relative to the repository root (null: outside it).
 * @param {string} root @param {string} dir @returns {string | null}
 */
function relativeTo(root, dir) {
  const rel = relative(resolve(root), resolve(dir));
  if (rel.startsWith("..") || isAbsolute(rel)) return null;
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** Whether each of `names` (paths relative to the session directory, a workflow's startup
 * inputs) is a file there; an unsafe name, or one leading out of the directory, is absent.
 * @param {string} dir @param {string[]} names @returns {Record<string, boolean>}
 */
export function sessionFiles(dir, names) {
  const realDir = real(dir) ?? resolve(dir);
  /** @type {Record<string, boolean>} */
  const out = {};
  for (const name of names) {
    const r = pathProblem(name) === null ? real(join(dir, name)) : null;
    let file = false;
    try {
      file = r !== null && isWithin(r, realDir) && statSync(r).isFile();
    } catch {
      file = false;
    }
    out[name] = file;
  }
  return out;
}

/** "migrate" when it turns this invalid 3.0 state into a valid one, "migrate --salvage" when
 * only salvage does, else null (docs/spec.md §9.5: no dead ends).
 * @param {import("./types.js").Loaded} loaded @param {string} dir
 */
function repairOf(loaded, dir) {
  if (loaded.status !== "invalid" || !isObject(loaded.doc)) return null;
  // the migration time does not decide whether it repairs: the clock will do
  return repairCommand(loaded.doc, {
    now: Date.now() * 1000,
    projectHint: basename(real(dir) ?? resolve(dir)),
  });
}

/** @param {string} root @param {string} dir @param {string} rel @returns {number | null} */
function mtime(root, dir, rel) {
  const candidates = [join(root, rel), ...(rel.includes("/") ? [] : [join(dir, rel)])];
  const realRoot = real(root) ?? resolve(root);
  for (const c of candidates) {
    const r = real(c);
    if (r === null || !isWithin(r, realRoot)) continue; // missing, or a link out of the repository
    try {
      return statSync(r).mtimeMs * 1000;
    } catch {
      // try the next
    }
  }
  return null;
}

/** decide(snapshot, step, now (µs), workflow, {session, staleSeconds, takeover}): the decision
 * with its briefing (null when the state cannot be used as it is, or another session is live).
 * @param {Snapshot} snap @param {string | null} step @param {number} now @param {Workflow} wf
 * @param {DecideOptions} opts @returns {Decision}
 */
export function decide(snap, step, now, wf, opts) {
  const out = decideAction(snap, step, now, wf, opts);
  out.briefing = null;
  out.plan = null;
  out.alternatives = [];
  let gateOpen = false;
  if (snap.status === "ok" && snap.doc !== null && out.action !== "session_active") {
    const exists = {
      ...Object.fromEntries(Object.entries(snap.mtimes).map(([p, m]) => [p, m !== null])),
      ...(snap.files ?? {}),
    };
    out.briefing = build(snap.doc, out.step, wf, {
      action: out.action,
      exists,
      events: snap.lastEvents,
      sessionRel: snap.sessionRel ?? null,
    });
    missingDeliverables(out, snap, wf);
    unrecordedCheckpoint(out, snap, wf);
    if (out.action === "offer_rerun" && out.step !== null) {
      // A complete step whose gate is still open: its empty required decisions first (only
      // with the user's choice), and the end of the chat the gate may ask for.
      const g = gateAfter(snap.doc, out.step, wf);
      const decisions = g !== null ? gateDecisions(g, out.step) : [];
      if (g !== null) {
        const end = cmd(SESSION_END, endWhen(g, nextStepOf(snap.doc, out.step, wf)));
        out.commands.unshift(
          ...decisions,
          cmd(g.approve, approvedWhen(g)),
          ...(g.session_break ? [end] : []),
        );
        gateOpen = true;
        /** @type {any} */ (out).gate_open = g.id;
      }
    }
    if (WORKING.includes(out.action) && out.step !== null) {
      paused(out, snap);
      out.plan = buildPlan(snap.doc, out.step, wf, {
        action: out.action,
        sub: out.sub_step,
        sessionRel: snap.sessionRel ?? null,
      });
      const steps = isObject(snap.doc.steps) ? snap.doc.steps : {};
      const pending = isObject(steps[out.step]) && steps[out.step].status === "pending";
      out.commands = planCommands(out.plan, out.action, pending);
      out.alternatives = planAlternatives(out.plan, out.action);
    }
  }
  const gap =
    snap.status === "ok" && snap.doc !== null ? staleGap(snap.doc, snap.lastEvents, now) : null;
  let staleFinding = false;
  if (gap !== null && out.plan !== null && out.warnings.includes("SR708")) {
    // the user may be away: the agent goes on, and the gap stays on record for the gate
    const days = Math.floor((gap[1] - gap[0]) / 86400e6);
    const title = `${STALE_FINDING}${days} days idle (last work ${formatTimestamp(gap[0])}): is the work still wanted?`;
    out.commands.unshift(
      cmd(
        `session-resume finding add ${shellQuote(title)}`,
        "only if the user cannot be asked now (warning SR708); then go on",
      ),
    );
    staleFinding = true;
  }
  if (out.action === "fresh_start") freshPlan(out, snap, now, wf);
  const writes = [...out.commands, ...out.alternatives].some((c) => isWriter(c.run));
  const fresh = (opts.session ?? null) === null && writes;
  out.session = { id: opts.session ?? null, new: fresh };
  // the first command takes the lease whenever the caller does not hold it live already: a
  // new id, or a named one whose lease ended, went stale or is another's implicit one
  const holds =
    (opts.session ?? null) !== null &&
    out.lease !== null &&
    out.lease.state === "live" &&
    out.lease.session === opts.session;
  // a fresh start's `init` takes the lease
  if (writes && !holds && out.action !== "fresh_start" && (out.plan !== null || gateOpen)) {
    out.commands.unshift(cmd(SESSION_START));
    for (const alt of out.alternatives) alt.when += AFTER_SESSION_START;
  }
  const facts = factsOf(out, snap, now, wf, opts);
  facts.stale_finding = staleFinding;
  out.reasons = [...new Set(/** @type {string[]} */ (out.reasons))].map((c) => explain(c, facts));
  out.warnings = [...new Set(/** @type {string[]} */ (out.warnings))].map((c) => explain(c, facts));
  return out;
}

export const INIT = "session-resume init PROJECT";

/** A fresh start's plan (spec §10.2): `init`, then the workflow's first step as a `start` of
 * the state `init` writes. @param {any} out @param {Snapshot} snap @param {number} now
 * @param {Workflow} wf */
function freshPlan(out, snap, now, wf) {
  if (!wf.stepKeys.length) return;
  const doc = /** @type {StateDocument} */ (templateState(wf, "fresh", formatTimestamp(now)));
  const steps = isObject(doc.steps) ? doc.steps : {};
  const key = Object.keys(steps).length ? orderedKeys(steps, wf)[0] : wf.stepKeys[0];
  const plan = buildPlan(doc, key, wf, {
    action: "start",
    sub: null,
    sessionRel: snap.sessionRel ?? null,
  });
  const def = wf.step(key);
  Object.assign(out, { step: key, step_name: def ? def.name : null, plan });
  out.commands = [cmd(INIT), ...planCommands(plan, "start", true)];
  out.alternatives = planAlternatives(plan, "start");
}

/** SR720 (spec §7): the step worked on is in progress and the last session ended paused.
 * @param {any} out @param {Snapshot} snap */
function paused(out, snap) {
  const steps = isObject(snap.doc?.steps) ? snap.doc.steps : {};
  const st = steps[out.step];
  if (!isObject(st) || st.status !== "in_progress") return;
  for (const ev of [...snap.lastEvents].reverse()) {
    if (["session_start", "heartbeat", "takeover"].includes(ev.event)) continue;
    if (ev.event === "session_end" && isObject(ev.detail) && ev.detail.reason === "paused")
      out.reasons.push("SR720");
    return;
  }
}

/** What the codes' words name (resumemessages.mjs; the reference's `_facts`).
 * @param {any} out @param {any} snap @param {number} now @param {any} wf @param {any} opts
 * @returns {Record<string, any>} */
function factsOf(out, snap, now, wf, opts) {
  const doc = snap.doc ?? {};
  const steps = isObject(doc.steps) ? doc.steps : {};
  const gap = snap.doc ? staleGap(doc, snap.lastEvents, now) : null;
  const updated = gap !== null ? gap[0] : snap.doc ? lastWork(doc, snap.lastEvents) : null;
  const resumed = gap !== null && gap[1] !== now ? gap[1] : null;
  const running = Object.keys(steps).filter(
    (k) => isObject(steps[k]) && steps[k].status === "in_progress",
  );
  const lease = out.lease ?? {};
  const ids = out.step !== null ? (wf.step(out.step)?.checkpoints ?? []) : [];
  /** @type {{path: string, why: string}[]} */
  const load = out.briefing?.load ?? [];
  const facts = {
    step: out.step,
    // the step's checkpoints up to the recorded one: the work SR714 may have to redo
    done_checkpoints: ids.includes(out.sub_step) ? ids.slice(0, ids.indexOf(out.sub_step) + 1) : [],
    step_name: out.step_name,
    sub_step: out.sub_step,
    next_step: out.next_step,
    incomplete: out.incomplete,
    running,
    updated: updated !== null ? formatTimestamp(updated) : null,
    age_days: updated !== null ? Math.floor(((resumed ?? now) - updated) / 86400e6) : null,
    resumed: resumed !== null ? formatTimestamp(resumed) : null,
    commits: snap.commitsSince ?? null,
    now: out.now,
    lease,
    session: lease.session ?? null,
    own: opts.session != null && lease.session === opts.session,
    stale_seconds: opts.staleSeconds,
    session_rel: snap.sessionRel,
    orphan_step: out.orphan?.step ?? null,
    temp_files: [...snap.tempFiles],
    missing: out.missing ?? [],
    read_now: load.map((e) => e.path),
    next_checkpoint: out.next_checkpoint,
    prereq_missing: out.prereq_missing ?? [],
    short: out.short ?? null,
    worklog_checkpoint: out.worklog_checkpoint ?? null,
    workflow: wf.id,
    step_keys: wf.stepKeys,
    action: out.action,
    state_codes: [...snap.codes],
    gate_open: out.gate_open ?? null,
  };
  delete out.missing;
  delete out.prereq_missing;
  delete out.short;
  delete out.worklog_checkpoint;
  delete out.gate_open;
  return facts;
}

const missing = (/** @type {Snapshot} */ snap, /** @type {unknown} */ p) =>
  typeof p === "string" && (snap.mtimes[p] === null || snap.mtimes[p] === undefined);

/** The repository-relative paths of the deliverables in `due` that are not on disk.
 * @param {Snapshot} snap @param {{file: string}[]} due @returns {string[]}
 */
const lostDeliverables = (snap, due) =>
  due
    .filter((d) => snap.files?.[d.file] !== true)
    .map((d) => sessionPath(snap.sessionRel ?? null, d.file));

/** SR714: the step continued after a checkpoint lists an artifact not on disk, or its
 *  workflow deliverable written at or before that checkpoint is not; SR715: the same for a
 *  completed earlier step, every deliverable of it (spec §10).
 * @param {Decision} out @param {Snapshot} snap a usable state's @param {Workflow} wf
 */
function missingDeliverables(out, snap, wf) {
  const steps = isObject(snap.doc?.steps) ? snap.doc.steps : {};
  const key = out.step;
  if (key === null || !(key in steps)) return;
  const st = isObject(steps[key]) ? steps[key] : {};
  if (out.action === "resume_from_checkpoint") {
    const def = wf.step(key);
    const sub = typeof st.sub_step === "string" ? st.sub_step : null;
    const gone = (st.artifacts ?? []).filter((/** @type {unknown} */ p) => missing(snap, p));
    for (const p of lostDeliverables(snap, def ? deliverablesDue(def, sub) : []))
      if (!gone.includes(p)) gone.push(p);
    if (gone.length) {
      /** @type {any} */ (out).missing = gone;
      out.warnings.push("SR714");
    }
  }
  const order = orderedKeys(steps, wf);
  const before = order.includes(key) ? order.slice(0, order.indexOf(key)) : [];
  const lost = before.flatMap((k) =>
    isObject(steps[k]) && steps[k].status === "complete"
      ? [
          ...(steps[k].artifacts ?? []).filter((/** @type {unknown} */ p) => missing(snap, p)),
          ...lostDeliverables(snap, wf.step(k)?.deliverables ?? []),
        ]
      : [],
  );
  if (lost.length) {
    /** @type {any} */ (out).prereq_missing = [...new Set(lost)];
    out.warnings.push("SR715");
  }
  if (st.status === "pending") completedShort(out, snap, steps, before, wf);
}

/** SR716 (spec §10): the step to start follows a complete step (skipped ones passed over)
 *  whose last run, as the worklog's tail records it (its latest `step_start`, then its
 *  `step_complete`), recorded no checkpoint or not its last one.
 * @param {Decision} out @param {Snapshot} snap @param {JsonObject} steps
 * @param {string[]} before @param {Workflow} wf
 */
function completedShort(out, snap, steps, before, wf) {
  const done = before.filter((k) => !(isObject(steps[k]) && steps[k].status === "skipped"));
  const key = done.length ? done[done.length - 1] : null;
  if (key === null || !isObject(steps[key]) || steps[key].status !== "complete") return;
  const def = wf.steps.find((s) => s.key === key);
  const ids = def ? def.checkpoints : [];
  let started = false;
  /** @type {string | null} */
  let last = null;
  /** @type {string | null} */
  let at = null;
  for (const e of snap.lastEvents) {
    if (e.step !== key) continue;
    if (e.event === "step_start") [started, last, at] = [true, null, null];
    else if (e.event === "checkpoint" && ids.includes(e.sub_step)) last = e.sub_step;
    // without its start in the tail, the checkpoints the tail holds are still the run's latest
    else if (e.event === "step_complete" && (started || last !== null)) at = last ?? "";
  }
  if (ids.length && at !== null && at !== ids[ids.length - 1]) {
    /** @type {any} */ (out).short = {
      step: key,
      sub_step: at || null,
      unrecorded: ids.includes(at) ? ids.slice(ids.indexOf(at) + 1) : ids,
    };
    out.warnings.push("SR716");
  }
}

/** SR718 (spec §10): the step worked on is in progress and the worklog's tail, after the
 *  step's latest step_start, records a checkpoint later than the state's sub_step.
 * @param {Decision} out @param {Snapshot} snap a usable state's @param {Workflow} wf
 */
function unrecordedCheckpoint(out, snap, wf) {
  const def = out.step !== null ? wf.step(out.step) : null;
  if (!WORKING.includes(out.action) || !def || out.step === null) return;
  const ids = def.checkpoints;
  const steps = isObject(snap.doc?.steps) ? snap.doc.steps : {};
  const st = isObject(steps[out.step]) ? steps[out.step] : {};
  const later = worklogCheckpointAfter(snap.lastEvents, out.step, ids, st.sub_step);
  if (later !== null) {
    /** @type {any} */ (out).worklog_checkpoint = later;
    // the reason of a `continue_step` already
    if (!out.reasons.includes("SR718")) out.warnings.push("SR718");
  }
}

/** The latest checkpoint of step `key` (one of `ids`, its workflow checkpoints) that the
 *  worklog's tail records after the step's latest step_start and later in `ids` than `sub`
 *  (any, when `sub` is not one of them); null when there is none (SR718).
 * @param {Snapshot["lastEvents"]} events @param {string} key @param {string[]} ids
 * @param {unknown} sub @returns {string | null}
 */
function worklogCheckpointAfter(events, key, ids, sub) {
  const at = ids.indexOf(/** @type {string} */ (sub));
  /** @type {string | null} */
  let later = null;
  for (const e of events) {
    if (e.step !== key) continue;
    if (e.event === "step_start") later = null;
    else if (e.event === "checkpoint" && ids.includes(e.sub_step) && ids.indexOf(e.sub_step) > at)
      later = e.sub_step;
  }
  return later;
}

/**
 * @param {Snapshot} snap @param {string | null} step @param {number} now @param {Workflow} wf
 * @param {DecideOptions} opts @returns {Decision}
 */
function decideAction(snap, step, now, wf, opts) {
  /** @type {Decision} */
  const out = {
    decision_version: 2,
    action: "",
    step,
    step_name: null,
    sub_step: null,
    next_checkpoint: null,
    skip_files: [],
    startup_files: [],
    reasons: [],
    warnings: [],
    orphan: null,
    lease: null,
    commands: [],
    now: formatTimestamp(now),
    workflow: wf.id,
    next_step: null,
    incomplete: [],
  };
  const lease = leaseState(snap.lease, {
    now,
    ended: snap.ended,
    ownerAlive: snap.ownerAlive,
    staleSeconds: opts.staleSeconds,
  });
  if (snap.lease !== null) {
    const str = (/** @type {unknown} */ v) => (v === undefined ? null : v);
    out.lease = {
      state: lease.state,
      session: str(snap.lease.session),
      owner: str(snap.lease.owner),
      heartbeat: str(snap.lease.heartbeat),
      age_seconds: lease.age === null ? null : Math.round(lease.age),
    };
  }
  if (snap.tempFiles.length) out.warnings.push("SR170");
  if (lease.state === "ended") out.warnings.push("SR513");
  if (lease.state === "unreadable") out.warnings.push("SR510");
  const orphaned = lease.state === "stale" || lease.state === "dead_owner";
  const finish = () => withOrphan(out, snap, lease, orphaned);

  // A lease taken by writes that named no session ("implicit") is adopted, never waited for.
  if (
    lease.state === "live" &&
    !opts.takeover &&
    opts.session !== snap.lease?.session && // (a live lease is there)
    snap.lease?.implicit !== true
  ) {
    // The agent cannot know whether it is its own unless the id is in its conversation; else
    // it asks again when the lease goes stale, or takes over with the user's consent.
    const holder = String(snap.lease?.session);
    const again = `session-resume resume DIR${step ? ` --step ${step}` : ""}`;
    const hb = parseTimestamp(snap.lease?.heartbeat);
    const wait =
      hb === null
        ? ""
        : `at or after ${formatTimestamp(hb + opts.staleSeconds * 1e6)} (when the lease goes ` +
          "stale unless its holder writes again); ";
    return Object.assign(out, {
      action: "session_active",
      reasons: ["SR511"],
      commands: [
        cmd(
          `${again} --session ${shellQuote(holder)}`,
          `only if the id ${holder} appears earlier in this conversation or in your notes, ` +
            "printed by a `session start` you ran; if you cannot find it there, it is not yours",
        ),
        cmd(
          again,
          `${wait}write nothing to this session before; then follow the new answer (the same session still live then: ask the user whether to wait longer or take over)`,
        ),
        cmd(
          "session-resume session start --takeover",
          `${CONSENT}, after telling them session ${holder} is live${
            out.lease?.age_seconds != null
              ? ` (its last heartbeat ${out.lease.age_seconds} s ago)`
              : ""
          } and may be working now`,
        ),
      ],
    });
  }
  // The live session the caller is: the one it names, or an implicit lease when it names none.
  const holder =
    snap.lease !== null && typeof snap.lease.session === "string" ? snap.lease.session : null;
  const own =
    lease.state === "live" &&
    holder !== null &&
    (opts.session === holder || ((opts.session ?? null) === null && snap.lease?.implicit === true))
      ? holder
      : null;
  const status = snap.status;
  const again = cmd(
    `session-resume resume DIR${step ? ` --step ${step}` : ""}`,
    "after the command above succeeded",
  );
  if ((status === "corrupt" || status === "absent") && snap.backupUsable) {
    Object.assign(out, {
      action: "needs_recovery",
      reasons: [...snap.codes, "SR130"],
      commands: [cmd("session-resume recover DIR"), again],
    });
    return finish();
  }
  if (status === "absent")
    return Object.assign(out, {
      action: "fresh_start",
      reasons: ["SR700"],
      commands: [cmd("session-resume init PROJECT"), again],
    });
  if (status === "corrupt") {
    Object.assign(out, {
      action: "needs_recovery",
      reasons: [...snap.codes],
      commands: [cmd("session-resume recover DIR"), again],
    });
    return finish();
  }
  if (status === "needs_migration")
    return Object.assign(out, {
      action: "migrate_first",
      reasons: ["SR140"],
      commands: [cmd("session-resume migrate DIR"), again],
    });
  if (status === "too_new")
    return Object.assign(out, { action: "refuse_newer_version", reasons: ["SR141"] });
  if (status !== "ok" || snap.doc === null) {
    const repair = [
      cmd(`session-resume ${snap.repair ?? "validate"} DIR`),
      ...(snap.repair ? [again] : []),
    ];
    return Object.assign(out, {
      action: "invalid_state",
      reasons: [...snap.codes],
      commands: repair,
    });
  }

  const steps = isObject(snap.doc.steps) ? snap.doc.steps : {};
  if (staleGap(snap.doc, snap.lastEvents, now) !== null && !staleRecorded(snap.doc))
    out.warnings.push("SR708");
  const order = orderedKeys(steps, wf);
  const running = order.filter((k) => steps[k].status === "in_progress");
  if (running.length > 1) out.warnings.push("SR306");
  if (step === null) {
    const target = running[0] ?? order.find((k) => steps[k].status === "pending") ?? null;
    if (target === null) {
      Object.assign(out, { action: "workflow_complete", step: null, reasons: ["SR707"] });
      return finish();
    }
    out.step = target;
    stepAction(out, steps, order, target, wf, true, snap.lastEvents, own);
  } else {
    if (!(step in steps)) {
      if (wf.freeSteps) {
        Object.assign(out, { action: "start", reasons: ["SR701"] });
        return finish();
      }
      return Object.assign(out, { action: "unknown_step", reasons: ["SR711"] });
    }
    if (running.length && !running.includes(step)) out.warnings.push("SR709");
    stepAction(out, steps, order, step, wf, false, snap.lastEvents, own);
  }
  return finish();
}

// Events after which the user has seen the work at a gate: a stale gap before them is settled.
const GATE_EVENTS = ["step_complete", "step_skip"];
const LEASE_EVENTS = ["session_start", "session_end", "heartbeat", "takeover"];
export const STALE_FINDING = "Resumed after ";

/** SR708 (spec §10): [last work, resumed] when the state was last worked on more than 7 days
 * before now (resumed: now), or when the worklog's tail shows work resumed more than 7 days
 * after the work before it with no step completed or skipped since; else null (the reference's
 * `stale_gap`).
 * @param {StateDocument} doc @param {JsonObject[]} events @param {number} now
 * @returns {[number, number] | null} */
export function staleGap(doc, events, now) {
  const updated = lastWork(doc, events);
  if (updated !== null && (now - updated) / 1e6 > OLD_STATE_SECONDS) return [updated, now];
  /** @type {[number, unknown][]} */
  const work = [];
  for (const e of events) {
    if (LEASE_EVENTS.includes(/** @type {string} */ (e.event)) || e.event === "migrated") continue;
    let t = null;
    try {
      t = typeof e.ts === "string" ? parseTimestamp(e.ts) : null;
    } catch {
      t = null;
    }
    if (t !== null) work.push([t, e.event]);
  }
  for (let i = work.length - 1; i > 0; i--) {
    const [before] = work[i - 1];
    const [after, event] = work[i];
    if (GATE_EVENTS.includes(/** @type {string} */ (event))) return null;
    if ((after - before) / 1e6 > OLD_STATE_SECONDS) return [before, after];
  }
  return null;
}

/** Whether an open finding records the stale gap already (the plan's `finding add` of SR708
 * ran): the warning is not repeated. @param {StateDocument} doc */
export function staleRecorded(doc) {
  const found = doc.open_findings;
  return (
    Array.isArray(found) && found.some((t) => typeof t === "string" && t.startsWith(STALE_FINDING))
  );
}

/** When the state was last worked on (spec §10): `updated`, unless its latest state event is
 *  the migration: then the original `updated`, kept as `x-legacy.updated`.
 * @param {StateDocument} doc @param {JsonObject[]} events @returns {number | null}
 */
function lastWork(doc, events) {
  const work = events.filter(
    (e) => !["session_start", "session_end", "heartbeat", "takeover"].includes(e.event),
  );
  // kept in the form it had in the file, an offset included (docs/spec.md §9.3 step 2)
  const kept = isObject(doc["x-legacy"]) ? tsValue(doc["x-legacy"].updated)[0] : null;
  const legacy = kept === null ? null : parseTimestamp(kept);
  if (work.length && work[work.length - 1].event === "migrated" && legacy !== null) return legacy;
  return parseTimestamp(doc.updated);
}

/**
 * @param {Decision} out @param {JsonObject} steps @param {string[]} order @param {string} key
 * @param {Workflow} wf
 * @param {boolean} orchestrator
 * @param {JsonObject[]} [events]
 * @param {string | null} [own]
 */
function stepAction(out, steps, order, key, wf, orchestrator, events = [], own = null) {
  const st = steps[key];
  const def = wf.step(key);
  out.step_name = st.name ?? null;
  if (def?.budget) out.startup_files = [...def.budget.files];
  const idx = order.indexOf(key);
  const behind = order
    .slice(0, idx)
    .filter((k) => !["complete", "skipped"].includes(steps[k].status));
  if (st.status === "complete") {
    Object.assign(out, {
      action: "offer_rerun",
      reasons: ["SR704"],
      commands: [cmd(`session-resume start ${key} --force`, CONSENT)],
    });
    return;
  }
  if (st.status === "skipped") {
    const next =
      order.slice(idx + 1).find((k) => !["complete", "skipped"].includes(steps[k].status)) ?? null;
    Object.assign(out, {
      action: "next_step",
      reasons: ["SR705"],
      next_step: next,
      commands: next ? [cmd(`session-resume resume DIR --step ${next}`)] : [],
    });
    return;
  }
  if (behind.length && !orchestrator) {
    Object.assign(out, {
      action: "prerequisites_incomplete",
      reasons: ["SR706"],
      incomplete: behind,
      commands: [
        cmd("session-resume resume DIR"),
        cmd(`session-resume start ${key} --force`, CONSENT),
      ],
    });
    return;
  }
  if (behind.length) out.warnings.push("SR706");
  if (st.status === "pending") {
    Object.assign(out, { action: "start", reasons: ["SR701"] });
    return;
  }
  const noSubStep = st.sub_step === null || st.sub_step === undefined;
  if (noSubStep && own !== null && startedBy(events, key) === own) {
    // The live session asking started it and recorded nothing yet: go on, do not loop (SR713).
    Object.assign(out, { action: "continue_step", reasons: ["SR713"] });
    return;
  }
  if (noSubStep && startedAtGate(events, key) && !(st.artifacts ?? []).length) {
    // Handed over at a gate (`transition`), no work recorded: a start, not a restart (SR712).
    Object.assign(out, { action: "start", reasons: ["SR712"] });
    return;
  }
  if (noSubStep && def && worklogCheckpointAfter(events, key, def.checkpoints, null) !== null) {
    // A `.bak` from before the step's first checkpoint was restored: the work the worklog
    // records may be on disk, so the step goes on (SR718 says how), no restart.
    Object.assign(out, { action: "continue_step", reasons: ["SR718"] });
    return;
  }
  if (noSubStep) {
    Object.assign(out, { action: "restart_step", reasons: ["SR702"] });
    return;
  }
  Object.assign(out, {
    action: "resume_from_checkpoint",
    reasons: ["SR703"],
    sub_step: st.sub_step,
    skip_files: [...(st.context_files_used ?? [])],
  });
  if (def?.checkpoints.includes(st.sub_step)) {
    const pos = def.checkpoints.indexOf(st.sub_step);
    out.next_checkpoint = def.checkpoints[pos + 1] ?? null;
  }
}

/** The session of the step's latest event when it is its start with no checkpoint since.
 * @param {JsonObject[]} events @param {string} key @returns {string | null}
 */
function startedBy(events, key) {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev.step !== key) continue;
    return ev.event === "step_start" && typeof ev.session === "string" ? ev.session : null;
  }
  return null;
}

/** A POSIX shell word for `s` (Python's shlex.quote). @param {string} s */
function shellQuote(s) {
  if (s === "") return "''";
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}

/** The step's latest event is a `step_start` written by `transition` (its detail names the
 *  step completed), with no checkpoint, completion or skip since.
 * @param {JsonObject[]} events @param {string} key @returns {boolean}
 */
export function startedAtGate(events, key) {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev.step !== key) continue;
    if (ev.event === "step_start") return isObject(ev.detail) && "completed" in ev.detail;
    if (["checkpoint", "step_complete", "step_skip"].includes(ev.event)) return false;
  }
  return false;
}

/**
 * @param {Decision} out @param {Snapshot} snap @param {import("./types.js").LeaseState} lease
 * @param {boolean} orphaned @returns {Decision}
 */
function withOrphan(out, snap, lease, orphaned) {
  if (!orphaned) return out;
  out.warnings.push("SR512");
  const doc = snap.doc ?? {};
  const steps = isObject(doc.steps) ? doc.steps : {};
  const running = Object.keys(steps).filter(
    (k) => isObject(steps[k]) && steps[k].status === "in_progress",
  );
  const where = running[0] ?? null; // none in progress: null, not the step asked about
  const st = where !== null && isObject(steps[where]) ? steps[where] : {};
  const l = snap.lease ?? {}; // (an orphan has a lease)
  const val = (/** @type {unknown} */ v) => (v === undefined ? null : v);
  out.orphan = {
    session: val(l.session),
    owner: val(l.owner),
    pid: val(l.pid),
    host: val(l.host),
    started: val(l.started),
    heartbeat: val(l.heartbeat),
    reason: lease.state === "dead_owner" ? "owner_dead" : "heartbeat_stale",
    silent_seconds: Math.round(lease.age ?? 0),
    step: where ?? null,
    sub_step: st.sub_step ?? null,
    last_events: snap.lastEvents,
    possibly_incomplete: possiblyIncomplete(snap, st),
  };
  return out;
}

/** Artifacts of the interrupted step that are missing or changed after its last checkpoint.
 * @param {Snapshot} snap @param {JsonObject} step @returns {{path: string, why: string}[]}
 */
function possiblyIncomplete(snap, step) {
  /** @type {number | null} */
  let lastCheckpoint = null;
  for (const ev of snap.lastEvents) {
    if (ev.event === "checkpoint" || ev.event === "step_start")
      lastCheckpoint = parseTimestamp(ev.ts);
  }
  /** @type {{path: string, why: string}[]} */
  const out = [];
  for (const p of step.artifacts ?? []) {
    const m = snap.mtimes[p];
    if (m === null || m === undefined) out.push({ path: p, why: "missing" });
    else if (lastCheckpoint !== null && m > lastCheckpoint)
      out.push({ path: p, why: "modified after the last checkpoint" });
  }
  return out;
}
