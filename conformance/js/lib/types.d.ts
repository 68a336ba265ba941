// The types the library's JSDoc shares (tsconfig.lib.json checks them with checkJs): nothing
// here exists at run time. A module names one as `import("./types.js").Name` (from
// lib/migration/: "../types.js"). The published API's declarations are index.d.ts.

import type { ValidateFunction } from "ajv";

/**
 * A JSON value parsed from a file whose shape has not been checked yet: a state file being
 * validated, migrated or repaired, a .bak, the lease, a worklog line, a workflow definition.
 * This is the JSON boundary and the one place the library's types say `any`: the code reads
 * such a value defensively (isObject, typeof, Array.isArray) before it relies on a member, as
 * the protocol requires of a file that may break its schema.
 */
// biome-ignore lint/suspicious/noExplicitAny: the JSON boundary (parsed input), see above
export type Json = any;
/** A JSON object parsed from a file (see Json): its members are unchecked. */
export type JsonObject = Record<string, Json>;

/** A stable diagnostic code of the protocol, e.g. "SR121" (docs/codes/). */
export type Code = string;
/** Microseconds since the Unix epoch: the clock every operation takes as an input. */
export type Micros = number;

/** A state document (00-session-state.json) as parsed; read defensively, see Json. */
export type StateDocument = JsonObject;

/** A finding with its words: a migration note (SR150/SR151/SR152), a refused write or
 * transition's problem, a validate finding. */
export interface Diagnostic {
  code: Code;
  message: string;
  pointer: string;
}
/** A validator's finding (lib/findings.mjs): its code, words and place; the hint when the
 * finding has one of its own (else the catalogue's fix), line and column once located, and a
 * severity only where it is not the code's (a count of the findings not listed). */
export interface Found {
  code: Code;
  message: string;
  pointer: string;
  hint?: string;
  line?: number | null;
  column?: number | null;
  severity?: string;
  file?: string;
}
/** A refused write's problem: a Diagnostic whose place may be a file. */
export interface Problem {
  code: Code;
  message: string;
  pointer?: string;
  file?: string;
}

// --- workflows (lib/workflow.mjs) ----------------------------------------------------------

export interface StepDef {
  key: string;
  name: string;
  agents: string[];
  reviewed: boolean;
  /** The checkpoint whose work includes the review passes (`review_checkpoint`), or null. */
  reviewAt: string | null;
  optional: boolean;
  checkpoints: string[];
  /** Each checkpoint's `after` text (null: none). */
  after: Record<string, string | null>;
  /** Legacy checkpoint id -> current id. */
  legacy: Record<string, string>;
  /** The files the step writes (session-relative) and the checkpoint whose work first writes each. */
  deliverables: { file: string; writtenAt: string }[];
  budget: { max: number; files: string[] } | null;
  gate: GateDef | null;
}
/** The gate after a step (schema/workflow/1.json $defs/gate). */
export interface GateDef {
  id: string;
  kind: "approval" | "validation";
  session_break?: boolean;
  decisions?: string[];
}
/** How many challenger review passes a review-audited step needs (schema/workflow/1.json). */
export interface ReviewDef {
  tier_decision: string;
  passes: Record<string, number>;
  default_tier: string;
}
export interface DecisionDef {
  key: string;
  required: boolean;
  enum: unknown[] | undefined;
  legacyTopLevel: boolean;
}
export interface FieldDef {
  name: string;
  required: boolean;
  schema: object;
  mirrors: string | null;
}
export interface Workflow {
  id: string;
  sessionDir: string;
  freeSteps: boolean;
  adoptsUnnamed: boolean;
  review: ReviewDef | null;
  steps: StepDef[];
  stepKeys: string[];
  decisions: DecisionDef[];
  fields: FieldDef[];
  step(key: string): StepDef | null;
  /** The compiled schema of the state's workflow-specific parts (fields and decisions). */
  fragment: ValidateFunction;
}

// --- reading a session directory (lib/store.mjs, lib/session.mjs) --------------------------

export type LoadStatus =
  | "absent"
  | "ok"
  | "invalid"
  | "corrupt"
  | "needs_migration"
  | "too_new"
  | "bad_version"
  | "refused";
/** What bytes are as a state file (store.mjs `classify`): a document whenever it parsed. */
export type Classified =
  | {
      status: "absent" | "corrupt" | "refused";
      doc: null;
      codes: Code[];
      version?: string;
      found?: Found[];
    }
  | {
      status: Exclude<LoadStatus, "absent" | "corrupt" | "refused">;
      doc: StateDocument;
      codes: Code[];
      version?: string;
      /** what was found, in the reference's words (its store's classify) */
      found?: Found[];
    };
/** The session's state as read (store.mjs `load`). */
export type Loaded = Classified & { backupUsable: boolean };
/** A .bak judged (store.mjs `usableBackup`): document null when unusable, problems say why. */
export interface Backup {
  document: StateDocument | null;
  migratedFrom: string | null;
  problems: Code[];
  /** why it is unusable, in the reference's words */
  found: Found[];
}

/** One worklog record as written (spec §6). */
export interface WorklogEvent {
  v: 1;
  ts: string;
  seq: number;
  session: string;
  event: string;
  step?: string;
  sub_step?: string;
  detail?: Record<string, unknown>;
}
/** The lease file (00-session.active) as a writer writes it (spec §7); `implicit`: taken by a
 * write that named no session. */
export interface LeaseFile {
  v: 1;
  session: string;
  owner: string;
  pid: number | null;
  host: string;
  started: string;
  heartbeat: string;
  implicit?: true;
}
/** The worklog's last events (session.mjs `readTail`); events as parsed, unchecked. */
export interface Tail {
  events: JsonObject[];
  codes: Code[];
  lastSeq: number;
  endsWithNewline: boolean;
  exists: boolean;
  size: number;
}
/** The lease file (00-session.active) as parsed: null when there is none, {} or the parsed
 * object when unusable (codes say so). */
export interface LeaseRead {
  lease: JsonObject | null;
  codes: Code[];
  /** The codes' findings in the reference's words, the sentinel named. */
  found?: Found[];
}
export type LeaseStateName =
  | "none"
  | "unreadable"
  | "ended"
  | "dead_owner"
  | "idle"
  | "stale"
  | "live";
export interface LeaseState {
  state: LeaseStateName;
  /** Seconds since the heartbeat (null: none readable). */
  age: number | null;
}

// --- the resume decision (lib/resume.mjs, lib/plan.mjs, lib/briefing.mjs) ------------------

/** Everything decide() needs from the directory (resume.mjs `snapshot`). */
export interface Snapshot {
  status: LoadStatus;
  doc: StateDocument | null;
  codes: Code[];
  backupUsable: boolean;
  repair: "migrate" | "migrate --salvage" | null;
  lease: JsonObject | null;
  ended: boolean;
  ownerAlive: boolean | null;
  lastEvents: JsonObject[];
  /** Each listed artifact's mtime (µs), null when missing or unsafe. */
  mtimes: Record<string, number | null>;
  tempFiles: string[];
  sessionRel: string | null;
  /** SR708: commits since the last work outside the session directory (null: unknown) */
  commitsSince?: number | null;
  /** Which startup inputs of the workflow exist in the session directory. */
  files: Record<string, boolean>;
}
/** A command line of a resume answer and when to run it (spec §10.3). */
export interface Command {
  run: string;
  when: string;
}
export interface Checkpoint {
  id: string;
  after: string | null;
}
export interface Briefing {
  step: string | null;
  optional: boolean;
  decisions: Record<string, unknown>;
  open_findings: unknown[];
  decision_log: JsonObject[];
  review_audit: unknown;
  review_audited: boolean;
  artifacts: { path: string; exists: boolean }[];
  last_checkpoint: Checkpoint | null;
  next_checkpoint: Checkpoint | null;
  last_events: JsonObject[];
  load: { path: string; why: string }[];
  skip: { path: string; reason: string }[];
}
export interface Gate {
  id: string | null;
  kind: GateDef["kind"] | null;
  session_break: boolean;
  decisions: { key: string; allowed: unknown[] | null; required: boolean; value: unknown }[];
  /** What passing the gate takes (prose). */
  rule: string;
  /** The id of the decision_log entry recording the user's approval (spec §4.1), or null. */
  approved: string | null;
  /** The write recording the approval. */
  approve: string;
}
export interface Review {
  tier: string | null;
  tier_decision: string | null;
  tier_decided: boolean;
  /** The gate whose decisions include the tier's decision (null: none). */
  tier_gate: string | null;
  passes: number | null;
  recorded: JsonObject | null;
  /** The checkpoint the audit is recorded just before (null: before `complete`). */
  before: string | null;
  write: string;
}
export interface NextStep {
  key: string;
  name: string | null;
  optional: boolean;
  start: string;
  skip: string | null;
  transition: string;
  /** Who starts it: the next chat after a session break, else this chat (spec §10.2). */
  by?: "this_chat" | "next_chat";
}
/** The plan of a working answer (spec §10.2). */
export interface Plan {
  step: string;
  name: string | null;
  optional: boolean;
  open_gate: (Gate & { step: string }) | null;
  checkpoints: { id: string; after: string; write: string }[];
  artifacts_rule: string;
  review_audit: Review | null;
  open_findings: { count: number; blocks_complete: boolean; rule: string };
  complete: string;
  gate: Gate | null;
  next_step: NextStep | null;
}
/** A code with its words in a decision's reasons and warnings. */
export interface Explained {
  code: Code;
  message: string;
  hint: string;
}
export interface Orphan {
  session: unknown;
  owner: unknown;
  pid: unknown;
  host: unknown;
  started: unknown;
  heartbeat: unknown;
  reason: "owner_dead" | "heartbeat_stale";
  silent_seconds: number;
  step: string | null;
  sub_step: unknown;
  last_events: JsonObject[];
  possibly_incomplete: { path: string; why: string }[];
}
/** The resume decision (schema/decision/2.json) as decide() builds it: reasons and warnings
 * are codes until decide() explains them. */
export interface Decision {
  decision_version: 2;
  action: string;
  step: string | null;
  step_name: string | null;
  sub_step: string | null;
  next_checkpoint: string | null;
  skip_files: string[];
  startup_files: string[];
  reasons: (Code | Explained)[];
  warnings: (Code | Explained)[];
  orphan: Orphan | null;
  lease: {
    state: LeaseStateName;
    session: unknown;
    owner: unknown;
    heartbeat: unknown;
    age_seconds: number | null;
  } | null;
  commands: Command[];
  now: string;
  workflow: string;
  next_step: string | null;
  incomplete: string[];
  briefing?: Briefing | null;
  plan?: Plan | null;
  alternatives?: Command[];
  session?: { id: string | null; new: boolean };
}
