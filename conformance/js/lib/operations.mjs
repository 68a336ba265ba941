// The four operations as the conformance adapter and the CLI run them on disk: validate,
// migrate, recover, resume (spec §2-§5, §9, §10). Results carry stable codes only.

import { rmSync } from "node:fs";
import { basename, join } from "node:path";
import { isCorrupt, readJsonBytes } from "./jsonread.mjs";
import { readLimited, real } from "./files.mjs";
import { migrate, MigrationError } from "./migrate.mjs";
import { commitsSince } from "./gitlog.mjs";
import { decide, sessionFiles, snapshot, staleGap } from "./resume.mjs";
import { STATE } from "./session.mjs";
import {
  checkPaths,
  checkWritePaths,
  keepPreMigration,
  logEvent,
  recover,
  Refused,
  replaceState,
  repoRelative,
  serialize,
  unreadWords,
} from "./store.mjs";
import { LockError, withLock } from "./lock.mjs";
import { jsonPatch } from "./patch.mjs";
import { formatTimestamp } from "./timeutil.mjs";
import { validate } from "./validate.mjs";
import { CURRENT } from "./versions.mjs";
import { loadWorkflow, WorkflowError } from "./workflow.mjs";
import { stateWorkflowRefusal, stateWorkflowSpec } from "./config.mjs";

const unique = (/** @type {string[]} */ codes) => [...new Set(codes)].sort();

/**
 * validate: the codes found in a state file or a session directory.
 * @param {string} path
 * @param {{workflow?: string|null, now: number, skew?: number, maxSize?: number, root?: string|null, checkArtifacts?: boolean}} opts
 * @returns {string[]}
 */
export function validatePath(path, opts) {
  return validate(path, {
    workflow: opts.workflow ?? undefined,
    now: opts.now,
    skew: opts.skew,
    maxSize: opts.maxSize,
    root: opts.root ?? undefined,
    checkArtifacts: opts.checkArtifacts,
  });
}

/**
 * migrate a session directory's state to the current version in place.
 * @param {string} dir
 * `salvage`: resolve contradictions one documented way each instead of refusing (docs/spec.md §9.4).
 * @param {{now: number, root: string, workflow?: string|null, dryRun?: boolean, salvage?: boolean}} opts
 * @returns {{status: "migrated"|"current"|"refused", codes: string[],
 *   notes?: import("./types.js").Diagnostic[], from?: string,
 *   original?: import("./types.js").StateDocument, document?: import("./types.js").StateDocument,
 *   keptAs?: string}} `keptAs`: the name the pre-migration file is kept under (migrated).
 */
export function migrateDir(dir, { now, root, workflow = null, dryRun = false, salvage = false }) {
  try {
    // a write runs the whole path policy: refused before anything is opened (docs/spec.md §1)
    if (dryRun) checkPaths(dir, root);
    else checkWritePaths(dir, root);
  } catch (err) {
    if (err instanceof Refused) return { status: "refused", codes: err.codes };
    throw err;
  }
  let wf = null;
  try {
    wf = workflow ? loadWorkflow(workflow) : null;
  } catch (err) {
    if (err instanceof WorkflowError) return { status: "refused", codes: unique(err.codes) };
    throw err;
  }
  // --check and --dry-run only read: no lock (which would create a lock file), as the reference
  if (dryRun) return migrateLoaded(dir, { now, root, wf, dryRun, salvage });
  try {
    return withLock(dir, () => migrateLoaded(dir, { now, root, wf, dryRun, salvage }));
  } catch (err) {
    if (err instanceof LockError) return { status: "refused", codes: err.codes };
    throw err;
  }
}

/**
 * @param {string} dir
 * @param {{now: number, root: string, wf: import("./types.js").Workflow | null, dryRun: boolean,
 *   salvage: boolean}} opts
 * @returns {ReturnType<typeof migrateDir>}
 */
function migrateLoaded(dir, { now, root, wf, dryRun, salvage }) {
  const res = readLimited(join(dir, STATE), { root });
  if (!res.data) {
    const codes = unique(res.codes ?? []);
    // the reader's words for why it did not open the state (a FIFO: SR102), as the reference's
    const notes = codes.map((code) => ({
      code,
      message: unreadWords(code, join(dir, STATE)),
      pointer: "",
    }));
    return { status: "refused", codes, notes };
  }
  const parsed = readJsonBytes(res.data);
  if (parsed.value === null || isCorrupt(parsed.codes))
    return {
      status: "refused",
      codes: unique([...parsed.codes, "SR152"]),
      // the reader's findings, then the reference's refusal (state_repair.migrate_session)
      notes: [
        ...parsed.found,
        {
          code: "SR152",
          message: "the file is corrupt; run `session-resume recover` first",
          pointer: "",
        },
      ],
    };
  let result;
  try {
    result = migrate(parsed.value, {
      now,
      workflow: wf,
      projectHint: basename(real(dir) ?? dir),
      salvage,
      file: join(dir, STATE),
      sessionDir: repoRelative(dir, root),
    });
  } catch (err) {
    if (err instanceof MigrationError)
      return { status: "refused", codes: unique(err.codes), notes: err.diagnostics };
    throw err;
  }
  const base = {
    codes: unique(result.codes),
    notes: result.notes,
    from: result.from,
    original: parsed.value,
    document: result.document,
  };
  if (!result.changed) return { ...base, status: "current", codes: [], notes: [] };
  if (dryRun) return { ...base, status: "migrated" };
  // migrate() set revision and updated and refused contradictions: what the dry-run patch
  // shows is exactly what is written (docs/spec.md §9.3)
  /** @type {{path: string, made: boolean} | null} */
  let kept = null;
  try {
    kept = keepPreMigration(dir, result.from);
    replaceState(dir, serialize(result.document), { rotate: true, always: true });
  } catch (err) {
    if (kept?.made) rmSync(kept.path, { force: true }); // nothing changed: not even the kept copy
    if (err instanceof Refused)
      return { ...base, status: "refused", codes: unique([...result.codes, ...err.codes]) };
    throw err;
  }
  const extra = logEvent(dir, "migrated", {
    ts: formatTimestamp(now),
    detail: {
      from: result.from,
      to: CURRENT,
      changes: jsonPatch(parsed.value, result.document).length,
    },
  });
  return {
    ...base,
    status: "migrated",
    codes: unique([...result.codes, ...extra]),
    keptAs: basename(kept.path),
  };
}

/**
 * recover a corrupt or missing state: from a valid .bak, else fresh from the workflow.
 * @param {string} dir
 * @param {{now: number, root: string, workflow?: string|null, project?: string|null}} opts
 * `found`, `backupFound`: the state's findings and the .bak's, in the reference's words.
 * @returns {{status: "none" | "restored_backup" | "recreated" | "refused", codes: string[],
 *   keptAs?: string|null, migratedFrom?: string|null, preMigrationKeptAs?: string|null,
 *   backupProblems?: string[], found?: import("./types.js").Found[],
 *   backupFound?: import("./types.js").Found[]}}
 */
export function recoverDir(dir, { now, root, workflow = null, project = null }) {
  try {
    const out = recover(dir, root, { now, workflow, project });
    return {
      status: out.status,
      codes: unique(out.codes),
      keptAs: out.keptAs ?? null,
      migratedFrom: out.migratedFrom ?? null,
      preMigrationKeptAs: out.preMigrationKeptAs ?? null,
      backupProblems: out.backupProblems ?? [],
      found: out.found ?? [],
      backupFound: out.backupFound ?? [],
    };
  } catch (err) {
    if (err instanceof WorkflowError || err instanceof Refused || err instanceof LockError)
      return {
        status: "refused",
        codes: unique(err.codes),
        found: err instanceof Refused ? err.found : [],
      };
    throw err;
  }
}

/**
 * resume: the resume decision for a session directory (spec §10).
 * @param {string} dir
 * `defaultWorkflow`: the project's configured workflow (for a state naming none, or its id).
 * @param {{now: number, root: string, step?: string|null, workflow?: string|null,
 *   defaultWorkflow?: string|null, session?: string|null, staleSeconds?: number,
 *   takeover?: boolean, ownerAlive?: boolean|null}} opts
 * @returns {import("./types.js").Decision}
 */
export function resumeDir(dir, opts) {
  const snap = snapshot(dir, opts.root, opts.ownerAlive ?? null);
  const own = snap.doc ? snap.doc.workflow : null;
  // a state's workflow field names a built-in or the configured workflow, never a path
  const spec = opts.workflow || stateWorkflowSpec(own, opts.defaultWorkflow ?? null);
  if (spec === null) {
    const message = stateWorkflowRefusal(own);
    throw new WorkflowError(["SR403"], message, [
      { code: "SR403", message, file: "", pointer: "/workflow" },
    ]);
  }
  const wf = loadWorkflow(spec);
  // which startup inputs and deliverables of the workflow's steps exist (briefing, SR714/SR715)
  const inputs = [
    ...new Set([
      ...wf.steps.flatMap((s) => (s.budget ? s.budget.files : [])),
      ...wf.steps.flatMap((s) => s.deliverables.map((d) => d.file)),
    ]),
  ];
  snap.files = sessionFiles(dir, inputs);
  // SR708 says whether the project moved on: the commits since, outside the session directory
  const gap = snap.doc !== null ? staleGap(snap.doc, snap.lastEvents, opts.now) : null;
  if (gap !== null && opts.root)
    snap.commitsSince = commitsSince(opts.root, gap[0], snap.sessionRel);
  return decide(snap, opts.step ?? null, opts.now, wf, {
    session: opts.session ?? null,
    staleSeconds: opts.staleSeconds ?? 300,
    takeover: opts.takeover ?? false,
  });
}
