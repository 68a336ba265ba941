// Type declarations of the session-resume library API (index.mjs). Checked by
// `npm run typecheck` (tsc --noEmit over this file and test/types-check.ts). The shapes the
// library itself is checked against (lib/types.d.ts, with its JSDoc) are imported from there,
// not declared twice: the resume decision (schema/decision/2.json), workflows, the worklog.

import type {
  Briefing,
  Classified,
  Code,
  Command,
  Decision,
  Diagnostic,
  Explained,
  Loaded,
  Micros,
  Plan,
  Problem,
  Workflow,
  WorklogEvent,
} from "./lib/types.js";

export type {
  Briefing,
  Checkpoint,
  Classified,
  Code,
  Command,
  DecisionDef,
  Explained,
  FieldDef,
  Gate,
  GateDef,
  LeaseStateName,
  Loaded,
  LoadStatus,
  Micros,
  NextStep,
  Orphan,
  Plan,
  Problem,
  Review,
  ReviewDef,
  StepDef,
  Workflow,
  WorklogEvent,
} from "./lib/types.js";

/** A JSON object as read from a state file (its members unchecked: test before use). */
export type StateDocument = Record<string, unknown>;

export interface ValidateOptions {
  now: Micros;
  workflow?: string | null;
  skew?: number;
  maxSize?: number;
  root?: string | null;
  checkArtifacts?: boolean;
}
/** Every code found in a state file or a session directory (sorted, unique). */
export function validate(path: string, opts: ValidateOptions): Code[];
export interface FileReport {
  path: string;
  codes: Code[];
  version: string | null;
  workflow: string | null;
}
export function validateReport(path: string, opts: ValidateOptions): FileReport[];
export function validateDocument(
  data: Uint8Array,
  opts: ValidateOptions & { sessionDir?: string },
): Code[];

/** A note of a migration: SR150 (a change), SR151 (a value kept under x-legacy), SR152 (a refusal). */
export type MigrationNote = Diagnostic;
export interface MigrateResult {
  status: "migrated" | "current" | "refused";
  codes: Code[];
  notes?: MigrationNote[];
  from?: string;
  document?: StateDocument;
}
/** Migrate a session directory's state to the current version in place (.bak keeps the old
 * file). `salvage`: resolve contradictions one documented way each instead of refusing
 * (docs/spec.md §9.4). */
export function migrate(
  dir: string,
  opts: {
    now: Micros;
    root: string;
    workflow?: string | null;
    dryRun?: boolean;
    salvage?: boolean;
  },
): MigrateResult;
/** Migrate a parsed document (pure); sets revision and updated when it changes anything. */
export function migrateDocument(
  doc: StateDocument,
  opts: {
    now: Micros;
    workflow?: Workflow | null;
    projectHint?: string | null;
    salvage?: boolean;
    file?: string;
  },
): {
  document: StateDocument;
  changed: boolean;
  codes: Code[];
  notes: MigrationNote[];
  from: string;
};
/** "migrate" when migrating repairs `doc`, "migrate --salvage" when only salvage does, else null (docs/spec.md §9.5). */
export function repairCommand(
  doc: StateDocument,
  opts: { now: Micros; workflow?: Workflow | null; projectHint?: string | null },
): "migrate" | "migrate --salvage" | null;
export class MigrationError extends Error {
  codes: Code[];
  diagnostics: MigrationNote[];
}

export interface RecoverResult {
  status: "none" | "restored_backup" | "recreated" | "refused";
  codes: Code[];
  keptAs?: string | null;
  /** The restored .bak was a state of this version, migrated (docs/spec.md §5). */
  migratedFrom?: string | null;
  /** Why the .bak could not be restored (a fresh state was created instead). */
  backupProblems?: Code[];
}
/** Restore a corrupt or missing state from a valid .bak, else recreate it from the workflow. */
export function recover(
  dir: string,
  opts: { now: Micros; root: string; workflow?: string | null; project?: string | null },
): RecoverResult;

/** The resume decision (schema/decision/2.json) as resume() and decideResume() return it:
 * every reason and warning a code with its words, each command `{run, when}`, the plan of a
 * working answer, its alternatives and the session the commands name. */
export interface ResumeDecision
  extends Omit<
    Decision,
    "reasons" | "warnings" | "briefing" | "plan" | "alternatives" | "session"
  > {
  reasons: Explained[];
  warnings: Explained[];
  /** What a fresh agent needs from the state (docs/spec.md §10); null when the state cannot be used as it is. */
  briefing: Briefing | null;
  plan: Plan | null;
  alternatives: Command[];
  session: { id: string | null; new: boolean };
  [key: string]: unknown;
}
/** The resume decision for a session directory (spec §10). */
export function resume(
  dir: string,
  opts: {
    now: Micros;
    root: string;
    step?: string | null;
    workflow?: string | null;
    session?: string | null;
    staleSeconds?: number;
    takeover?: boolean;
    ownerAlive?: boolean | null;
  },
): ResumeDecision;
export function snapshot(dir: string, root: string, ownerAlive: boolean | null): unknown;
export function decideResume(
  snap: unknown,
  step: string | null,
  now: Micros,
  wf: Workflow,
  opts: { session?: string | null; staleSeconds?: number; takeover?: boolean },
): ResumeDecision;

export function load(dir: string, root: string): Loaded;
export function classify(data: Uint8Array): Classified;
export function serialize(doc: StateDocument): Uint8Array;
export class Refused extends Error {
  codes: Code[];
}
export function readJsonBytes(
  data: Uint8Array,
  opts?: { requireObject?: boolean; maxDepth?: number },
): { value: StateDocument | null; codes: Code[]; text: string | null };

export function parseYaml(text: string): unknown;
export class YamlError extends Error {
  code: Code;
  line: number | null;
  column: number | null;
}

/** A built-in workflow by id (schema/workflows/<id>.yaml) or a definition file by path. */
export function loadWorkflow(spec: string): Workflow;
/** The ids of the built-in workflows (discovered from schema/workflows/*.yaml). */
export function builtins(): string[];
export function templateState(wf: Workflow, project: string, now: string): StateDocument;
export class WorkflowError extends Error {
  codes: Code[];
}

export const CURRENT: string;
export const KNOWN: readonly string[];
export function versionOf(
  doc: StateDocument,
):
  | { raw: string; num: [number, number]; invalid?: undefined }
  | { invalid: true; raw?: undefined; num?: undefined };
export function getSchemaDir(): string;
export function setSchemaDir(dir: string): void;
export function formatTimestamp(micros: Micros): string;
export function parseTimestamp(value: unknown): Micros | null;
export function parseNow(value: string): Micros;
export function withLock<T>(dir: string, fn: () => T, opts?: { timeoutMs?: number }): T;
export class LockError extends Error {
  codes: Code[];
}

// --- writing -------------------------------------------------------------------------------

/** Where and when a write happens, and as which session. */
export interface Context {
  dir: string;
  now: Micros;
  root?: string | null;
  /** This session's id; a live lease of another session refuses the write (SR511). */
  session?: string | null;
  owner?: string;
  staleSeconds?: number;
  defaultWorkflow?: string;
  /** The id a write uses when it must choose one itself (an implicit lease, a takeover naming none); default a random one. */
  newSession?: string | null;
  /** How many archives `init` with `fresh` keeps (`archive_keep`; default 5). */
  archiveKeep?: number;
}
export interface WriteResult {
  revision: number;
  document: StateDocument;
  session: string;
  event: WorklogEvent | null;
  events: WorklogEvent[];
  step: string | null;
  lease: "keep" | "create" | "adopt" | "takeover";
  previousSession: string | null;
  attempts: number;
  /** `init` with `fresh`: the archive folder the old files moved to (null: nothing to archive). */
  archivedTo?: string | null;
}
/** A write was refused; nothing was written (except SR505: the state was, its event was not). */
export class WriteError extends Error {
  problems: Problem[];
  codes: Code[];
  exitCode: number;
}

export function save(
  dir: string,
  doc: StateDocument,
  opts: {
    now: Micros;
    root?: string | null;
    expectedRevision?: number | null;
    workflow?: string | null;
    event?: string | null;
    step?: string | null;
    subStep?: string | null;
    detail?: Record<string, unknown> | null;
    session?: string;
    allow?: string[];
  },
): { document: StateDocument; revision: number; event: WorklogEvent | null };
export function init(
  ctx: Context,
  project: string,
  opts?: { workflow?: string | null; fresh?: boolean },
): WriteResult;
export function start(
  ctx: Context,
  key: string,
  opts?: { force?: boolean; name?: string | null },
): WriteResult;
export function checkpoint(
  ctx: Context,
  key: string,
  subStep: string,
  opts?: { artifacts?: string[]; contextFiles?: string[] },
): WriteResult;
export function complete(ctx: Context, key: string): WriteResult;
export function skip(
  ctx: Context,
  key: string,
  reason: string,
  opts?: { force?: boolean },
): WriteResult;
export function decide(ctx: Context, key: string, value: unknown): WriteResult;
/** What `sessionStart`, `sessionEnd` and `ping` did: the session, the action, the worklog
 * events logged, the lease file now (null: removed or none) and the session whose lease was
 * adopted or taken over (the CLI's `--format json` answer, keys in snake case). */
export interface SessionResult {
  session: string | null;
  action: "created" | "kept" | "adopted" | "takeover" | "ended" | "none" | "refreshed";
  events: WorklogEvent[];
  lease: Record<string, unknown> | null;
  previousSession: string | null;
}
/** `session start`: create the lease, keep the caller's own, adopt an implicit one, or take over (an orphaned one, or a live one with `takeover`); SR511 otherwise. An owner with a control character is SR182, a pid outside 1..2^31-1 SR183 (both `exitCode` 2). */
export function sessionStart(
  ctx: Context,
  opts?: { takeover?: boolean; owner?: string | null; pid?: number | null },
): SessionResult & { session: string; action: "created" | "kept" | "adopted" | "takeover" };
/** `session end`: log `session_end` and remove the lease; `none` when there was none. SR511 for the live lease of an explicit session `ctx.session` does not name. With reason `paused` the step in progress stops before it is complete (spec §7, SR720). */
export function sessionEnd(
  ctx: Context,
  reason?: "paused" | null,
): SessionResult & { action: "ended" | "none" };
/** `ping`: refresh the lease's heartbeat (writes only the lease). SR514 without a lease, SR511 for an explicit session's live lease not named, SR512 for another session's orphaned one. */
export function ping(ctx: Context): SessionResult & { session: string; action: "refreshed" };
/** One review audit: the fields given are set, the lists appended (deduplicated). */
export interface ReviewAudit {
  complexity?: string | null;
  passesPlanned?: number | null;
  passesExecuted?: number | null;
  models?: string[];
  skipped?: number[];
  skipReasons?: string[];
}
/** Write moment 6, a challenger review run: `review_audit.step_<key>`, checked against the workflow (a review-audited step, an allowed complexity, consistent pass counts, a reason for skipped passes: SR710/SR420). */
export function reviewAudit(ctx: Context, key: string, audit: ReviewAudit): WriteResult;
export function logDecision(
  ctx: Context,
  entry: {
    title: string;
    choice: string;
    rationale: string;
    step?: string | null;
    alternatives?: string[];
  },
): WriteResult;
export function finding(ctx: Context, action: "add" | "resolve", title: string): WriteResult;
export function transition(
  ctx: Context,
  completeKey: string,
  startKey: string,
  decisions: Record<string, unknown>,
  opts?: { force?: boolean },
): WriteResult;

/** The user approved the gate of complete step `key`, with `decisions` (spec §4.1): one
 * write records them and the approval (`decision_log`, event `gate_approved`). */
export function approve(ctx: Context, key: string, decisions: Record<string, unknown>): WriteResult;

/** The pure transitions behind the write moments (no I/O). */
export namespace transitions {
  export class TransitionError extends Error {
    problems: Problem[];
    codes: Code[];
  }
  function start(
    doc: StateDocument,
    wf: Workflow,
    key: string,
    now: Micros,
    opts?: { force?: boolean; orphaned?: boolean; name?: string | null },
  ): StateDocument;
  function checkpoint(
    doc: StateDocument,
    wf: Workflow,
    key: string,
    subStep: string,
    opts?: { artifacts?: string[]; contextFiles?: string[]; base?: string | null },
  ): StateDocument;
  function complete(doc: StateDocument, wf: Workflow, key: string, now: Micros): StateDocument;
  function skip(
    doc: StateDocument,
    wf: Workflow,
    key: string,
    reason: string,
    opts?: { force?: boolean },
  ): StateDocument;
  function setDecision(
    doc: StateDocument,
    wf: Workflow,
    key: string,
    value: unknown,
  ): StateDocument;
  function logDecision(
    doc: StateDocument,
    entry: {
      title: string;
      choice: string;
      rationale: string;
      step?: string | null;
      alternatives?: string[];
    },
    now: Micros,
    wf?: Workflow | null,
  ): StateDocument;
  function addFinding(doc: StateDocument, title: string): StateDocument;
  function resolveFinding(doc: StateDocument, title: string): StateDocument;
  function reviewAudit(
    doc: StateDocument,
    wf: Workflow,
    key: string,
    audit: ReviewAudit,
  ): StateDocument;
  function transition(
    doc: StateDocument,
    wf: Workflow,
    completeKey: string,
    startKey: string,
    decisions: Record<string, unknown>,
    now: Micros,
    opts?: { force?: boolean },
  ): StateDocument;
  function nextDecisionId(doc: StateDocument): string;
  /** The user's approval of step `key`'s gate (spec §4.1). */
  function approveGate(
    doc: StateDocument,
    wf: Workflow,
    key: string,
    decisions: Record<string, unknown>,
    now: Micros,
  ): StateDocument;
  /** The decision_log entry recording the approval of step `key`'s gate, or null. */
  function gateApproval(doc: StateDocument, key: string): Record<string, unknown> | null;
}

/** Run the command line with `argv` (without node and the script); returns the exit code. */
export function cli(argv: string[]): number;
