"""The catalogue of diagnostic codes: the single source for messages' severity and the docs pages.

Codes are stable: a code is never reused for another meaning. Groups:
SR1xx read and parse, SR2xx schema, SR3xx semantic rules, SR4xx workflow and budget,
SR5xx worklog and sentinel, SR6xx handoff, SR7xx resume decisions, SR8xx import,
SR9xx internal.
"""

from __future__ import annotations

from session_resume.core.diagnostics import Diagnostic, Severity
from session_resume.core.versions import CURRENT
from session_resume.records import record


@record(frozen=True)
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    example: str
    fix: str


E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

_ALL = [
    # --- SR1xx: reading the file -------------------------------------------------------------
    Code(
        "SR100",
        "path-not-found",
        E,
        "The path given on the command line does not exist.",
        "session-resume validate missing.json",
        "Check the path; pass a state file or a directory.",
    ),
    Code(
        "SR101",
        "no-state-file",
        E,
        "A directory was given, but no `00-session-state.json` was found under it.",
        "session-resume validate docs/",
        "Point at the session directory (e.g. `agent-output/my-project`).",
    ),
    Code(
        "SR102",
        "not-a-regular-file",
        E,
        "The path is not a regular file (a FIFO, socket or device); it is never opened.",
        "mkfifo 00-session-state.json",
        "Replace it with a regular JSON file.",
    ),
    Code(
        "SR103",
        "dangling-symlink",
        E,
        "The path is a symbolic link whose target does not exist.",
        "ln -s gone.json 00-session-state.json",
        "Remove the link or restore its target.",
    ),
    Code(
        "SR104",
        "unreadable",
        E,
        "The file could not be read (permissions or an I/O error).",
        "chmod 000 00-session-state.json",
        "Fix the permissions; the message names the OS error.",
    ),
    Code(
        "SR105",
        "symlink-escapes-root",
        E,
        "The path is a symbolic link that leads outside the session's root; it is not followed.",
        "ln -s /etc/passwd 00-session-state.json",
        "Replace the link with the file itself.",
    ),
    Code(
        "SR106",
        "not-a-plain-name",
        E,
        "A session file operation was asked for a name that is not one plain component of the "
        "session directory (empty, `.`, `..`, a separator or a NUL byte); nothing was touched.",
        "a session file named `../outside.json`",
        "Name the file inside the session directory by its own name only.",
    ),
    Code(
        "SR107",
        "hard-linked-session-file",
        E,
        "A session file that is written in place (the worklog, the lock) has more than one "
        "name (a hard link): writing it would change the other name's file too, which may be "
        "outside the repository. Nothing was written.",
        "ln /elsewhere/log.jsonl agent-output/demo/00-worklog.jsonl",
        "Replace the hard link with a copy (`cp FILE FILE.new && mv FILE.new FILE`), then run "
        "the command again.",
    ),
    Code(
        "SR110",
        "empty-file",
        E,
        "The state file has zero bytes: it is corrupt (a crash mid-write).",
        "(a 0-byte 00-session-state.json)",
        "Run `session-resume recover DIR` to restore `.bak` or start fresh.",
    ),
    Code(
        "SR111",
        "whitespace-only",
        E,
        "The state file holds only whitespace: it is corrupt.",
        "(a file holding '\\n\\n')",
        "Run `session-resume recover DIR`.",
    ),
    Code(
        "SR112",
        "too-large",
        E,
        "The file is over the size limit; it was not read.",
        "(a 50 MB state file)",
        "State files are small; if this one is genuine, raise the limit (`max_size` in the "
        "configuration, docs/config.md, or `validate --max-size`).",
    ),
    Code(
        "SR113",
        "utf8-bom",
        E,
        "The file starts with a UTF-8 byte order mark, which JSON forbids (RFC 8259 §8.1).",
        "EF BB BF 7B ...",
        "Save the file as UTF-8 without BOM.",
    ),
    Code(
        "SR114",
        "not-utf8-encoding",
        E,
        "The file is UTF-16 or UTF-32; state files are UTF-8.",
        "FF FE 7B 00 ...",
        "Re-encode the file as UTF-8.",
    ),
    Code(
        "SR115",
        "invalid-utf8",
        E,
        "The file holds bytes that are not valid UTF-8.",
        '{"project": "caf\\xe9"}',
        "Re-encode the file as UTF-8; the position of the first bad byte is given.",
    ),
    Code(
        "SR116",
        "lone-surrogate",
        E,
        "A \\u escape encodes half of a UTF-16 surrogate pair; the text is not Unicode, so the "
        "file cannot be checked or written back faithfully.",
        '{"project": "\\ud800"}',
        "Fix the escape (a pair such as \\ud83d\\ude00, or the character itself).",
    ),
    Code(
        "SR120",
        "json-syntax",
        E,
        "The file is not valid JSON.",
        '{"project": "x",}',
        "A session's state file (`00-session-state.json`) is never edited by hand: run "
        "`session-resume recover DIR` (it keeps the broken file and restores the last good "
        "copy). Any other file: fix the syntax at the line and column given (the end of the "
        "file when it was cut short).",
    ),
    Code(
        "SR121",
        "duplicate-key",
        E,
        "An object holds the same key twice; readers disagree on which one wins.",
        '{"status": "pending", "status": "complete"}',
        "Keep one of the two keys.",
    ),
    Code(
        "SR122",
        "non-finite-number",
        E,
        "`NaN`, `Infinity` or `-Infinity` is not JSON.",
        '{"revision": NaN}',
        "Use a finite number or null.",
    ),
    Code(
        "SR123",
        "too-deep",
        E,
        "The document nests deeper than the limit; it was not checked further.",
        "[[[[...10,000 levels...]]]]",
        "State files are shallow; this file is not a state file.",
    ),
    Code(
        "SR124",
        "not-an-object",
        E,
        "The top-level value is not a JSON object.",
        '[{"project": "x"}]',
        f'The state file is one object: `{{"schema_version": "{CURRENT}", ...}}`.',
    ),
    Code(
        "SR130",
        "usable-backup",
        INFO,
        "The state file is corrupt but `.bak` parses and validates.",
        "(a corrupt 00-session-state.json beside a good .bak)",
        "Run `session-resume recover DIR`: it restores `.bak` and keeps the corrupt file.",
    ),
    Code(
        "SR140",
        "migration-needed",
        E,
        "The file is an older schema version; it must be migrated before use.",
        '{"schema_version": "2.0", ...}',
        "Run `session-resume migrate PATH` (add `--dry-run` to preview).",
    ),
    Code(
        "SR141",
        "version-too-new",
        E,
        "The file's schema version is newer than this tool knows; nothing is written to it.",
        '{"schema_version": "9.0", ...}',
        "Upgrade session-resume.",
    ),
    Code(
        "SR142",
        "invalid-version",
        E,
        f'`schema_version` is not a version string such as "{CURRENT}".',
        '{"schema_version": 3}',
        f'Write the version as a string: "{CURRENT}".',
    ),
    Code(
        "SR150",
        "migration-change",
        INFO,
        "Migration changed something that is worth knowing (a renamed key, a converted shape).",
        '"steps": {"3.5": ...} became "steps": {"3_5": ...}',
        "Nothing to do; `migrate --dry-run` lists every change as a JSON Patch.",
    ),
    Code(
        "SR151",
        "migration-kept-aside",
        W,
        "Migration could not map a value onto the current version; it was kept under an "
        "`x-legacy` key, never dropped.",
        '"lock": {"owner_id": "chat-1", ...} moved to "x-legacy": {"lock": ...}',
        "Review the `x-legacy` value; delete it once nothing needs it.",
    ),
    Code(
        "SR152",
        "migration-failed",
        E,
        "Migration could not produce a valid document of the current version, or the result "
        "would contradict itself (docs/spec.md §9.4); nothing was written.",
        "a v1 file whose `steps` is a list; two steps in progress",
        "For a contradiction, run `session-resume migrate --salvage DIR` as the message "
        "names; else fix the problem the message names by hand, then run `session-resume "
        "migrate DIR` again.",
    ),
    Code(
        "SR160",
        "lock-timeout",
        E,
        "The session lock could not be taken in time: another writer holds it.",
        "two agents writing the same session",
        "Retry; if no writer is running, the lock is stale only if its process is gone "
        "(the operating system releases it on exit).",
    ),
    Code(
        "SR161",
        "write-refused",
        E,
        "The write was refused: the new state would be invalid, or "
        "the file on disk needs migration or recovery first. Nothing was written.",
        "completing a step that is pending",
        "Read the diagnostics after the code: the first one says what to do; nothing was written.",
    ),
    Code(
        "SR162",
        "revision-conflict",
        E,
        "Another writer saved the state since it was read "
        "(the `revision` differs); nothing was written.",
        "save(expected_revision=4) while the file is at revision 5",
        "Reload the state, reapply the change, save again.",
    ),
    # --- SR2xx: schema -----------------------------------------------------------------------
    Code(
        "SR163",
        "write-failed",
        E,
        "The operating system refused the write (disk full, read-only file system, a "
        "directory where a file should be); the previous state and .bak are unchanged.",
        "a full disk during `session-resume checkpoint`",
        "Free space or fix the path the message names, then run the command again.",
    ),
    Code(
        "SR164",
        "session-file-write-failed",
        E,
        "The operating system refused to write a session file other than the state (the lease "
        "or the worklog: disk full, read-only directory, an I/O error); the state is unchanged.",
        "a full disk during `session-resume session start`",
        "Free space or fix the path the message names, then run the command again.",
    ),
    Code(
        "SR165",
        "state-written-not-synced",
        E,
        "The new state is in place, but the directory could not be synced after the rename (an "
        "I/O error): the change may not survive a power loss, and its worklog event was not "
        "appended.",
        "EIO from fsync() of the session directory",
        "Check the disk; run `session-resume validate DIR` and repeat the write if it is lost.",
    ),
    Code(
        "SR166",
        "write-over-size-limit",
        E,
        "The state this write would produce is larger than the reader's size limit (8 MiB): "
        "written, every later read would call it corrupt. The write was refused before "
        "anything was replaced.",
        "a `decide` whose value is 8 MiB of text",
        "Keep large content in an artifact file and record its path in the state instead.",
    ),
    Code(
        "SR201",
        "missing-property",
        E,
        "A required property is missing.",
        'a step without "status"',
        "Add the property; the schema page lists every field.",
    ),
    Code(
        "SR202",
        "wrong-type",
        E,
        "A value has the wrong JSON type.",
        '"current_step": "2"',
        "Use the type the message names.",
    ),
    Code(
        "SR203",
        "value-not-allowed",
        E,
        "A value is not one of the allowed values.",
        '"schema_version": "3.1"',
        "Use one of the values listed in the message.",
    ),
    Code(
        "SR204",
        "pattern-mismatch",
        E,
        "A string does not have the required form.",
        '"updated": "2026-03-02 10:15"',
        "Write the value in the form the message names.",
    ),
    Code(
        "SR205",
        "unexpected-property",
        E,
        "An object holds a property the schema does not allow.",
        'a step with "sub-step"',
        "Remove or rename it; extension keys start with `x-`.",
    ),
    Code(
        "SR206",
        "array-constraint",
        E,
        "An array breaks a constraint (duplicates, too few items).",
        '"open_findings": ["a", "a"]',
        "Remove the duplicate items.",
    ),
    Code(
        "SR207",
        "bad-key",
        E,
        "An object key does not have the required form.",
        '"steps": {"3.5": {...}}',
        "Step keys are `N` or `N_M` (run `session-resume migrate DIR` for `3.5`).",
    ),
    Code(
        "SR208",
        "out-of-range",
        E,
        "A number or length is out of range.",
        '"revision": -1',
        "Use a value within the range the message names.",
    ),
    Code(
        "SR209",
        "schema-violation",
        E,
        "The value breaks another schema rule.",
        "",
        "Read the message: it quotes the schema rule.",
    ),
    # --- SR3xx: semantic rules ---------------------------------------------------------------
    Code(
        "SR301",
        "status-timestamp-mismatch",
        E,
        "A step's timestamps disagree with its status (pending with `started`, in_progress "
        "without it, or a `completed` time on a step that is not complete).",
        '{"status": "pending", "started": "2026-03-02T10:00:00Z"}',
        "Set the fields the status implies (the message names them), or fix the status.",
    ),
    Code(
        "SR302",
        "complete-without-completed",
        E,
        "A complete step has no `completed` timestamp.",
        '{"status": "complete", "completed": null}',
        "Set `completed` to when the step finished.",
    ),
    Code(
        "SR303",
        "complete-with-sub-step",
        E,
        "A complete step still has a `sub_step`; it must be null.",
        '{"status": "complete", "sub_step": "phase_5_artifact"}',
        "Set `sub_step` to null.",
    ),
    Code(
        "SR304",
        "timestamp-order",
        E,
        "Timestamps are out of order: need started ≤ completed ≤ updated.",
        '"started": "2026-03-02T12:00:00Z", "completed": "2026-03-02T11:00:00Z"',
        "Fix whichever timestamp is wrong.",
    ),
    Code(
        "SR305",
        "timestamp-in-future",
        E,
        "A timestamp is later than now plus the allowed clock skew.",
        '"updated": "2099-01-01T00:00:00Z"',
        "Fix the clock of the machine that wrote it, or the value.",
    ),
    Code(
        "SR306",
        "several-in-progress",
        E,
        "More than one step is in_progress; a session runs one step at a time.",
        "steps 2 and 3 both in_progress",
        "Complete, skip or reset all but one.",
    ),
    Code(
        "SR307",
        "current-step-mismatch",
        E,
        "`current_step` does not match the in_progress step.",
        '"current_step": 7 with step 3 in_progress',
        "Set `current_step` to the in_progress step's number.",
    ),
    Code(
        "SR308",
        "earlier-step-incomplete",
        W,
        "A step has started while an earlier step is neither complete nor skipped.",
        "step 4 in_progress, step 2 pending",
        "Finish or skip the earlier step, or record why it was bypassed.",
    ),
    Code(
        "SR309",
        "status-not-allowed",
        E,
        "A step status is outside pending|in_progress|complete|skipped (for example `blocked`).",
        '{"status": "blocked"}',
        "Use one of the statuses pending, in_progress, complete or skipped.",
    ),
    Code(
        "SR310",
        "absolute-path",
        E,
        "An artifact or context path is absolute; paths are repository-relative.",
        '"artifacts": ["/home/me/repo/agent-output/p/01.md"]',
        "Write the path relative to the repository root.",
    ),
    Code(
        "SR311",
        "path-escapes-root",
        E,
        "A path climbs out of the repository with `..`.",
        '"artifacts": ["../../etc/passwd"]',
        "Only files inside the repository may be listed.",
    ),
    Code(
        "SR312",
        "control-character-in-path",
        E,
        "A path holds a control character (newline, NUL, escape…).",
        '"artifacts": ["a\\nb.md"]',
        "Remove the control character.",
    ),
    Code(
        "SR313",
        "duplicate-path",
        W,
        "The same path is listed twice in one list.",
        '"artifacts": ["a.md", "a.md"]',
        "Keep one entry.",
    ),
    Code(
        "SR314",
        "missing-file",
        E,
        "A listed artifact does not exist (checked with `--check-artifacts`).",
        '"artifacts": ["agent-output/p/01-requirements.md"] (absent)',
        "Restore the file, or re-run the step that produces it.",
    ),
    Code(
        "SR315",
        "backslash-in-path",
        W,
        "A path uses `\\` separators; the protocol uses `/`.",
        '"artifacts": ["agent-output\\\\p\\\\01.md"]',
        "Use forward slashes.",
    ),
    Code(
        "SR320",
        "duplicate-decision-id",
        E,
        "Two `decision_log` entries share an id.",
        'two entries with "id": "D002"',
        "Give each decision the next free id.",
    ),
    Code(
        "SR321",
        "decision-ids-not-increasing",
        W,
        "`decision_log` ids are not in increasing order.",
        "D003 listed before D002",
        "Keep the log in the order the decisions were made.",
    ),
    Code(
        "SR322",
        "superseded-by-unknown",
        W,
        "`superseded_by` names a decision id that is not in the log.",
        '"superseded_by": "D099"',
        "Point at an existing decision.",
    ),
    Code(
        "SR330",
        "unknown-top-level-key",
        W,
        "A top-level key is neither part of the core schema nor a field of the workflow "
        "(extension keys starting with `x-` are exempt).",
        '"workflow_status": "complete"',
        "Remove it, or declare it in the workflow definition's `fields`.",
    ),
    Code(
        "SR340",
        "invalid-timestamp",
        E,
        "A timestamp has the right form but is not a real instant.",
        '"updated": "2026-02-30T10:00:00Z"',
        "Use a real date and time.",
    ),
    # --- SR4xx: workflow and budget ---------------------------------------------------------
    Code(
        "SR400",
        "workflow-invalid",
        E,
        "The workflow definition is not valid (YAML or schema).",
        "steps: [{key: 1.5}]",
        "Fix the definition at the line given; see schema/workflow/1.json.",
    ),
    Code(
        "SR401",
        "workflow-duplicate-key",
        E,
        "The workflow YAML holds the same key twice.",
        "name: A\\nname: B",
        "Keep one of them.",
    ),
    Code(
        "SR402",
        "workflow-alias",
        E,
        "The workflow YAML uses anchors or aliases, which are refused (they allow alias bombs).",
        "a: &x [1]\\nb: *x",
        "Write the values out.",
    ),
    Code(
        "SR403",
        "workflow-not-found",
        E,
        "No built-in workflow has that name and no file is at that path.",
        "--workflow apexx",
        "Use the name of a built-in workflow (schema/workflows/NAME.yaml) or a path to a "
        "workflow YAML.",
    ),
    Code(
        "SR404",
        "workflow-mismatch",
        W,
        "The state's `workflow` field names another workflow than the one selected.",
        '"workflow": "dotagent" with --workflow apex',
        "Select the state's own workflow, or fix the field.",
    ),
    Code(
        "SR405",
        "config-invalid",
        E,
        "The project configuration (`.session-resume.yaml` or `[tool.session-resume]`) is invalid.",
        "workflow: 3",
        "Fix the key the message names; every key, its type, default and allowed values are "
        "in docs/config.md.",
    ),
    Code(
        "SR410",
        "unknown-step",
        E,
        "A step key is not a step of the workflow.",
        '"steps": {"9": {...}} under apex',
        "Remove the step or choose the workflow that defines it.",
    ),
    Code(
        "SR411",
        "missing-step",
        E,
        "A step of the workflow is missing from `steps`.",
        'apex state without step "3_5"',
        "Add the step with status pending (`session-resume migrate DIR` does).",
    ),
    Code(
        "SR412",
        "step-name-mismatch",
        E,
        "A step's `name` differs from the workflow's name for that key.",
        'step "2" named "Planning"',
        "Use the workflow's name.",
    ),
    Code(
        "SR413",
        "unknown-agent",
        W,
        "A step's `agent` is not one the workflow names for that step.",
        'step "1" agent "99-Nobody"',
        "Use one of the agents the message lists.",
    ),
    Code(
        "SR414",
        "unknown-checkpoint",
        E,
        "`sub_step` is not a checkpoint of that step in the workflow.",
        'step "2" sub_step "approval"',
        "Use a checkpoint id listed in the workflow (the message names them).",
    ),
    Code(
        "SR415",
        "context-over-budget",
        W,
        "A step recorded more context files than its startup budget allows.",
        'step "1" with 3 context files, budget 1',
        "Load other files on demand inside a sub-step.",
    ),
    Code(
        "SR416",
        "legacy-checkpoint",
        W,
        "`sub_step` uses a legacy checkpoint id that has a current name.",
        '"sub_step": "phase_3.5_strategy"',
        "Run `session-resume migrate DIR` or write the current id.",
    ),
    Code(
        "SR420",
        "workflow-field-invalid",
        E,
        "A workflow-specific field or decision breaks the workflow's rules "
        "(required key, allowed values).",
        'apex: "iac_tool": "Pulumi"',
        "Use a value the workflow allows (the message lists them).",
    ),
    Code(
        "SR421",
        "review-audit-unexpected",
        W,
        "`review_audit` has an entry for a step the workflow does not review.",
        'apex: "review_audit": {"step_3": {...}}',
        "Remove the entry.",
    ),
    Code(
        "SR422",
        "decision-key-unknown",
        E,
        "A decision was set under a key the workflow does not define (a workflow that lists "
        "its decision keys accepts only those; one with none accepts any key); nothing was "
        "written.",
        "apex: session-resume decide regoin westeurope",
        "Use one of the workflow's decision keys (the message lists them and names the nearest); "
        "a decision outside them goes in the decision log (`decide --log`).",
    ),
    # --- SR5xx: worklog and sentinel ---------------------------------------------------------
    Code(
        "SR501",
        "worklog-unreadable",
        E,
        "The worklog could not be read.",
        "chmod 000 00-worklog.jsonl",
        "Fix the permissions; the message names the OS error.",
    ),
    Code(
        "SR502",
        "worklog-torn-line",
        INFO,
        "The worklog's last line is incomplete: a writer died mid-append. It is ignored.",
        '{"v":1,"ts":"2026-03-02T10:00:00Z","se',
        "Nothing to do; the next append terminates it.",
    ),
    Code(
        "SR503",
        "worklog-garbage",
        W,
        "A worklog line in the middle of the file is not a JSON object (the line number is given).",
        "line 12: <<<<<<< HEAD",
        "Remove or repair the line; the worklog is append-only, so look for a bad merge.",
    ),
    Code(
        "SR504",
        "worklog-seq-order",
        W,
        "Worklog `seq` numbers do not increase.",
        '{"seq": 7} after {"seq": 9}',
        "Look for two writers appending without the lock.",
    ),
    Code(
        "SR505",
        "worklog-append-failed",
        E,
        "The state was written but its worklog event could not be appended (the worklog is "
        "a link, unwritable, or the disk is full).",
        "00-worklog.jsonl is a symbolic link",
        "Fix the worklog file; the state itself is intact and already holds the change.",
    ),
    Code(
        "SR510",
        "sentinel-invalid",
        W,
        "`00-session.active` is not a valid lease (a JSON "
        "object with `session` and `heartbeat`), or not a regular file.",
        '{"session": "a1"} (no heartbeat)',
        "Run `session-resume session end` or remove it.",
    ),
    Code(
        "SR511",
        "session-active",
        E,
        "A live session started explicitly holds the lease (its heartbeat is fresh and it has "
        "not ended), and this command names another session or none (only an implicit lease "
        "is anybody's); nothing was written.",
        "a second chat running `session-resume start 3` while the first is still working",
        "The holder is your session only if its id appears earlier in your conversation or "
        "notes (a `session start` you ran printed it): then run the same command with "
        "`--session ID`. Otherwise write nothing: ask again when the lease goes stale (the "
        "message says when), or take over with `session-resume session start --project "
        "PROJECT --takeover` only with the user's consent (logged).",
    ),
    Code(
        "SR512",
        "orphaned-session",
        W,
        "A session left its lease behind without a "
        "`session_end`, and its heartbeat is stale or its owner process is gone: it crashed.",
        "00-session.active heartbeat 2 hours old",
        "Run `session-resume report DIR` to see "
        "what it was doing, then resume; the next write takes the session over.",
    ),
    Code(
        "SR513",
        "stale-sentinel",
        INFO,
        "A lease file remains although its session ended.",
        "00-session.active after a session_end event",
        "Nothing to do; the next session start replaces it.",
    ),
    Code(
        "SR514",
        "no-session-lease",
        E,
        "There is no lease to refresh or end: no session has started in this directory, or "
        "it has ended.",
        "`session-resume ping` before `session-resume session start`",
        "Run `session-resume session start` (or any state write) first.",
    ),
    Code(
        "SR515",
        "sentinel-write-failed",
        E,
        "The lease file `00-session.active` could not be written (disk full, read-only "
        "directory, an I/O error); nothing else was changed after it.",
        "a full disk during `session-resume checkpoint`",
        "Free space or fix the directory's permissions, then run the command again.",
    ),
    # --- SR6xx: the handoff (00-handoff.md) ---------------------------------------------------
    Code(
        "SR600",
        "handoff-unreadable",
        E,
        "`00-handoff.md` could not be read as UTF-8 text (not a regular file, a link out of "
        "the session directory, unreadable, over 1 MiB, or not UTF-8).",
        "a 00-handoff.md saved as UTF-16",
        "Render it again: `session-resume render handoff DIR`.",
    ),
    Code(
        "SR601",
        "handoff-header",
        E,
        "The handoff does not start with the header `# {project} — Handoff (Step {N} "
        "complete)` followed by the line `Updated: {RFC 3339 UTC timestamp} | …`.",
        "# Orchestrator Handoff",
        "Render it again: `session-resume render handoff DIR`; never edit it by hand.",
    ),
    Code(
        "SR602",
        "handoff-section-missing",
        E,
        "A required section is missing. A handoff has exactly six H2 sections, in this order: "
        "Completed Steps, Key Decisions, Open Challenger Findings (must_fix only), Context for "
        "Next Step, Skill Context, Artifacts.",
        "no `## Skill Context` section",
        "Render it again: `session-resume render handoff DIR`.",
    ),
    Code(
        "SR603",
        "handoff-section-order",
        E,
        "The handoff's sections are out of order, or one appears twice.",
        "`## Artifacts` before `## Key Decisions`",
        "Render it again: `session-resume render handoff DIR`.",
    ),
    Code(
        "SR604",
        "handoff-unexpected-section",
        E,
        "The handoff has an H2 section that is not one of the six of the protocol.",
        "## Next Action",
        "Render it again; put extra notes in a file of their own and list its path.",
    ),
    Code(
        "SR605",
        "handoff-too-long",
        E,
        "The handoff has more than 60 lines.",
        "a handoff listing 80 artifacts",
        "Render it again: the renderer cuts long lists (`- … and N more`).",
    ),
    Code(
        "SR606",
        "handoff-stale",
        W,
        "The handoff's `Updated:` time is older than the `updated` of the state it describes: "
        "the state changed after the handoff was written.",
        "Updated: 2026-03-02T10:00:00Z, state updated 2026-03-02T11:30:00Z",
        "Render it again at the next gate: `session-resume render handoff DIR`.",
    ),
    Code(
        "SR607",
        "handoff-project-mismatch",
        W,
        "The handoff's header names another project than the state in the same directory.",
        "# other-project — Handoff (Step 2 complete)",
        "Render it again: `session-resume render handoff DIR`.",
    ),
    # --- SR7xx: resume decisions ------------------------------------------------------------
    Code(
        "SR700",
        "fresh-start",
        INFO,
        "There is no state file (or no session directory yet): start fresh.",
        "an empty or absent session directory",
        "Run the plan's first command, `session-resume init PROJECT --workflow WORKFLOW "
        "--session ID`: it creates the state and takes the lease; then the first step's start.",
    ),
    Code(
        "SR701",
        "step-pending",
        INFO,
        "The step has not started.",
        "status pending",
        "Run `session-resume start STEP`.",
    ),
    Code(
        "SR702",
        "step-restart",
        INFO,
        "The step is in progress with no checkpoint: restart it.",
        "status in_progress, sub_step null",
        "Run the step from its beginning.",
    ),
    Code(
        "SR703",
        "step-checkpoint",
        INFO,
        "The step is in progress at a checkpoint: continue after it.",
        "status in_progress, sub_step phase_2_waf",
        "Read the answer's `briefing`, then only the files in `briefing.load` (its partial "
        "deliverables first); leave the files in `briefing.skip`.",
    ),
    Code(
        "SR704",
        "step-complete",
        INFO,
        "The step is complete; a re-run is possible.",
        "status complete",
        "Ask before re-running; `session-resume start STEP --force`.",
    ),
    Code(
        "SR705",
        "step-skipped",
        INFO,
        "The step was skipped; go on to the next one.",
        "status skipped",
        "Run the next step.",
    ),
    Code(
        "SR706",
        "prerequisites-incomplete",
        W,
        "Earlier steps are neither complete nor skipped.",
        "step 4 asked for while step 2 is pending",
        "Continue anyway (`--force`) or hand over to the orchestrator.",
    ),
    Code(
        "SR707",
        "workflow-complete",
        INFO,
        "Every step is complete or skipped.",
        "all steps complete",
        "Nothing left to run.",
    ),
    Code(
        "SR708",
        "state-old",
        W,
        "The state was last updated more than 7 days ago.",
        "updated 2026-01-01 with now 2026-03-01",
        "Check the project is still current before resuming.",
    ),
    Code(
        "SR709",
        "other-step-in-progress",
        W,
        "Another step is in progress than the one asked for.",
        "asking for step 4 while step 2 is in_progress",
        "Finish or reset the step in progress first.",
    ),
    Code(
        "SR710",
        "invalid-transition",
        E,
        "The state change is not allowed from the step's "
        "current status (the message says why); nothing was written.",
        "`session-resume complete 3` while step 3 is pending",
        "Do what the message says first; nothing was written.",
    ),
    Code(
        "SR711",
        "unknown-step-requested",
        E,
        "The step key is not a step of the workflow.",
        "`session-resume resume DIR --step 9` under apex",
        "Use a step key of the workflow.",
    ),
    Code(
        "SR712",
        "step-handed-over",
        INFO,
        "The step was started at a gate by `transition` and recorded no checkpoint: start "
        "it from its beginning; this is not a restart and costs no attempt.",
        "`transition --complete 2 --start 3`, then `session end` at the gate",
        "Run `session-resume start STEP` and do the step's work.",
    ),
    Code(
        "SR713",
        "step-just-started",
        INFO,
        "The step was just started by the live session asking, which recorded no checkpoint "
        "yet: continue it (first checkpoint next); starting it again would loop.",
        "`session start`, `start 2`, then `resume DIR --step 2 --session ID`",
        "Do the first checkpoint's work, then run its write (the answer's `commands`).",
    ),
    Code(
        "SR714",
        "checkpoint-artifact-missing",
        W,
        "The step in progress recorded an artifact at a checkpoint that is not on disk, or a "
        "deliverable the workflow says is written by its recorded checkpoint is not: the work "
        "up to that checkpoint has lost its file.",
        '`artifacts: ["agent-output/p/02-architecture-assessment.md"]`, file deleted',
        "Write the file again (restore it from version control, or redo the work of the "
        "checkpoints up to `sub_step`) before the next checkpoint; then continue as planned.",
    ),
    Code(
        "SR715",
        "prerequisite-deliverable-missing",
        W,
        "A deliverable of a completed earlier step (an artifact it recorded, or a file the "
        "workflow names as its deliverable) is not on disk.",
        "step 1 complete with `agent-output/p/01-requirements.md`, file deleted",
        "Restore it (version control) before relying on it; re-run that step only with the "
        "user's consent (`session-resume start STEP --force`).",
    ),
    Code(
        "SR716",
        "completed-with-checkpoints-missing",
        W,
        "`complete` (or `transition`) completed a step whose later checkpoints were never "
        "recorded: the state says the step is done, its record says its work stopped earlier. "
        "`resume` says it again for the step to start after it, while the worklog's tail holds "
        "that run.",
        "`complete 1` with `sub_step` phase_1_discovery: 4 of apex's 5 checkpoints not recorded",
        "Tell the user at the gate. If that work was not done, reopen the step only with the "
        "user's consent (`session-resume start STEP --force`), do it and record each "
        "checkpoint after its work; if it was, say so in the handoff.",
    ),
    Code(
        "SR717",
        "completed-with-gate-decisions-empty",
        W,
        "A step was completed while decisions its gate records (required by the workflow) are "
        "still empty.",
        '`complete 1` with `decisions.complexity` ""',
        "Ask the user at the gate and record each: `session-resume decide KEY VALUE`.",
    ),
    Code(
        "SR718",
        "worklog-checkpoint-not-in-state",
        W,
        "The worklog records a checkpoint of the step after the one the state holds (a `.bak` "
        "older than the last write was restored): that checkpoint's work may be on disk.",
        "state at phase_2_waf (restored `.bak`), worklog: checkpoint phase_3_cost later",
        "Check the deliverable for that checkpoint's work; if it is there, record the "
        "checkpoint again (`session-resume checkpoint STEP ID`), else redo the work first.",
    ),
    Code(
        "SR720",
        "step-paused",
        INFO,
        "The step in progress was paused: its last session ended with `session end --reason "
        "paused` before the step was complete. Not a crash.",
        "step 2 in progress at phase_2_waf, worklog: session_end reason paused",
        "Continue the step after its last checkpoint: read what the answer lists, then follow "
        "the plan's commands.",
    ),
    Code(
        "SR170",
        "leftover-temp-file",
        W,
        "A temp file of an interrupted write is left in the "
        "session directory; it is never read as state.",
        ".00-session-state.json.3f2a9c.tmp",
        "Delete it once no writer is running.",
    ),
    Code(
        "SR180",
        "invalid-tool-arguments",
        E,
        "An MCP tool call's arguments do not fit the tool's input schema, or do not name one "
        "session inside the repository (`project` or `session_dir`); nothing was done.",
        'checkpoint {"project": "demo", "step": "1"} (no sub_step)',
        "Call the tool again with the arguments its input schema lists (`tools/list`).",
    ),
    Code(
        "SR181",
        "mcp-extra-missing",
        E,
        "`session-resume mcp` was run, but the optional MCP SDK (the `mcp` package) is not "
        "installed.",
        "pip install session-resume; session-resume mcp",
        "Install the extra: `pip install 'session-resume[mcp]'`.",
    ),
    Code(
        "SR182",
        "invalid-argument-text",
        E,
        "An argument holds text the session files cannot hold: bytes that are not UTF-8 (they "
        "reach the tool as lone surrogates) or a control character; nothing was written.",
        "session-resume session start DIR --owner $'\\xff'",
        "Pass the value as UTF-8 text without control characters.",
    ),
    Code(
        "SR183",
        "invalid-argument-value",
        E,
        "A number given as an argument lies outside the range the session files can hold: a "
        "lease's owner pid must be a process id, 1 to 2^31-1; nothing was written.",
        "session-resume session start DIR --pid 0",
        "Pass the pid of the long-lived process that owns the session (`--pid $PPID`), or "
        "leave `--pid` out.",
    ),
    Code(
        "SR184",
        "editor-settings-unmergeable",
        E,
        "`setup vscode` found a .vscode/settings.json it will not rewrite: comments or trailing "
        "commas (VS Code accepts them, a rewrite would lose them), not JSON, not an object, a "
        "`json.schemas` that is not a list, over 1 MiB, or holding what JSON cannot write back "
        "(a lone surrogate escape, `NaN`, a number beyond any float such as `1e400`); nothing "
        "was written, the file is kept as it is.",
        '.vscode/settings.json holding `{"editor.tabSize": 2, // two}`',
        "Add the entry the message shows to `json.schemas` by hand, or make the file plain JSON "
        "and run the command again.",
    ),
    Code(
        "SR185",
        "project-ambiguous",
        E,
        "`--project NAME` was given, no workflow is named (`--workflow`) or configured, and "
        "the session directories of two built-in workflows both hold a session of that "
        "project (`agent-output/NAME` and `memory/NAME`); nothing was done.",
        "session-resume decide region x --project demo, with agent-output/demo and memory/demo",
        "Name the session by its directory: run one of the commands the message lists, or "
        "set `workflow` in .session-resume.yaml.",
    ),
    Code(
        "SR190",
        "hook-config-invalid",
        E,
        "`hooks install` or `hooks uninstall` found a hook configuration file "
        "(.claude/settings.json, .github/hooks/session-resume.json) that is not a JSON object "
        "whose `hooks` maps event names to lists, or that holds what JSON cannot write back (a "
        "lone surrogate escape, `NaN`, a number beyond any float such as `1e400`); nothing was "
        "written, the file is kept as it is.",
        '.claude/settings.json holding `{"hooks": []}`',
        "Repair the file (the message says what is wrong) or move it aside, then run the "
        "command again.",
    ),
    # --- SR8xx: importing other formats (session-tracker, dotagent, TodoWrite) ---------------
    Code(
        "SR800",
        "import-source-missing",
        E,
        "The source directory does not hold the format's files (session-tracker: state.json "
        "with a task; dotagent: state/phase.json).",
        "session-resume import session-tracker ~/project --to agent-output/demo",
        "Point at the `.session` directory, or at the dotagent `memory/` directory; for an "
        "archived dotagent workflow use `--archive NAME`.",
    ),
    Code(
        "SR801",
        "import-source-corrupt",
        E,
        "A source file the import needs does not parse or has the wrong shape; nothing was "
        "written.",
        "state.json cut off mid-write",
        "Repair the file (the message names the JSON error), then import again.",
    ),
    Code(
        "SR802",
        "import-target-exists",
        E,
        "The target directory already holds a session; the import wrote nothing.",
        "session-resume import session-tracker .session --to agent-output/demo (twice)",
        "Re-import with `--force`: the existing session is archived under `.archive/` first.",
    ),
    Code(
        "SR803",
        "import-target-is-source",
        E,
        "`--to` is the source directory (or inside the part of it an import would change); an "
        "import never writes into its source.",
        "session-resume import dotagent memory --to memory",
        "Choose another session directory, such as `agent-output/PROJECT`.",
    ),
    Code(
        "SR804",
        "import-session-id-derived",
        INFO,
        "The source has no session id (session-tracker's `session_id` is always empty); a "
        "stable id was derived from its task and start time.",
        '"session_id": ""',
        "Nothing to do; the same source always gets the same id.",
    ),
    Code(
        "SR805",
        "import-timestamp-normalized",
        INFO,
        "Source timestamps with a UTC offset (`+00:00`) or without a zone were rewritten in "
        "UTC with `Z`; one later than now was clamped to now.",
        '"updated_at": "2026-03-01T10:15:30+00:00"',
        "Nothing to do; the originals are kept under `x-legacy`.",
    ),
    Code(
        "SR806",
        "import-leftover-temp",
        INFO,
        "Temp files of an interrupted write were found in the source and ignored.",
        ".session/.st_k2j3.tmp, memory/state/phase.json.tmp",
        "Nothing to do; delete them once the source tool is not running.",
    ),
    Code(
        "SR807",
        "import-worklog-line-unparsed",
        W,
        "A line of the source worklog is not a JSON object (session-tracker drops such lines "
        "silently); it was kept as a `note` event with its raw text.",
        'line 7: {"ts": "2026-03-01T10:',
        "Nothing to do; read the note if the line matters.",
    ),
    Code(
        "SR808",
        "import-status-unknown",
        W,
        "A status outside the source format's set; the step keeps or gets a valid status and "
        "the original value is kept under the step's `x-legacy`.",
        '{"id": "3", "status": "blocked"}',
        "Set the step's real status with `session-resume start STEP`, `complete STEP` or "
        "`skip STEP --reason TEXT`.",
    ),
    Code(
        "SR809",
        "import-several-in-progress",
        W,
        "Several items were in progress at once; only one step may be in progress in the "
        "current version. One was kept (the source's current step, else the one started "
        "last), the others are pending.",
        "two todo items with status in_progress",
        "Check the pending ones: finish or restart them when their turn comes.",
    ),
    Code(
        "SR810",
        "import-todo-id-remapped",
        INFO,
        "A todo item's id cannot be a step key (not a decimal number, or used twice); the item "
        "got the next free key, recorded in `x-todo-ids`.",
        '{"id": "a7", "content": "Write tests"}',
        "Nothing to do.",
    ),
    Code(
        "SR811",
        "import-duplicate-file-key",
        INFO,
        "One file was in the inventory under two keys (as typed, and as an absolute path); "
        "they were merged.",
        '"files": {"out/report.md": ..., "/home/z/my-project/out/report.md": ...}',
        "Nothing to do.",
    ),
    Code(
        "SR812",
        "import-path-outside-root",
        W,
        "A source file path lies outside the source's project root or the repository, so it "
        "cannot be a repository-relative artifact; it is kept under `x-legacy`.",
        '"/tmp/scratch.txt": {"status": "working"}',
        "Pass the tracker's project root with `--project-root`, or run the import from the "
        "repository the files belong to (`--root`).",
    ),
    Code(
        "SR813",
        "import-status-contradiction",
        W,
        "The source contradicts itself about whether the session ended (state says in "
        "progress but the worklog has `session_done`, or completed but the sentinel remains).",
        'state.json "status": "completed" with SESSION_ACTIVE present',
        "Check the report; the import follows the more cautious reading (stated in the message).",
    ),
    Code(
        "SR814",
        "import-source-old",
        W,
        "The source was last active more than 7 days ago (dotagent's 'ancient state').",
        '"last_updated": "2026-01-02T09:00:00Z" imported on 2026-03-01',
        "Check that the work is still current before resuming, or archive it and start fresh.",
    ),
    Code(
        "SR815",
        "import-interrupted-write",
        W,
        "dotagent's `interruption_safe` is false: the last checkpoint write did not finish.",
        '"interruption_safe": false',
        "Check the imported state against the files on disk before resuming.",
    ),
    Code(
        "SR816",
        "import-output-missing",
        W,
        "An output the source records as written does not exist or is not valid JSON.",
        'completed_phases: [{"phase": "REQUIREMENTS", "output": "memory/reports/demand.json"}] '
        "without the file",
        "Restore the file, or re-run the step that writes it.",
    ),
    Code(
        "SR817",
        "import-phase-progression",
        W,
        "dotagent's completed phases are not the canonical order without gaps or repeats, or "
        "`current_phase` is not the phase after the last completed one.",
        "completed_phases: ARCHITECTURE only",
        "Check the steps' statuses after the import; `validate` reports the order (SR308).",
    ),
    Code(
        "SR818",
        "import-phase-failed",
        W,
        "The dotagent phase failed; it was imported as in progress with no checkpoint (run it "
        "again) and an open finding.",
        '"phase_status": "failed"',
        "Resolve the cause, then restart the step (or skip it with a reason).",
    ),
    Code(
        "SR819",
        "import-task-restarted",
        W,
        "A dotagent task was running with no readable output: it is pending again with "
        "`attempts` + 1 (the skill's recovery scenario 1).",
        'task-002 status "running", no memory/tasks/task-002/output.json',
        "Nothing to do; the executor runs it again. Over 3 attempts, escalate.",
    ),
    Code(
        "SR820",
        "import-task-reconciled",
        INFO,
        "A dotagent task was running but its output exists: its status is the output's "
        "(the skill's recovery scenario 2).",
        'task-002 status "running", output.json says "pre_complete"',
        "Nothing to do.",
    ),
    Code(
        "SR821",
        "import-archives-found",
        INFO,
        "The dotagent memory directory holds archived workflows under `state/.archive/`.",
        "memory/state/.archive/wf-auth_20260301T100000Z/",
        "Import one of them with `--archive NAME` (or `--archive latest`) if that is the one "
        "you want.",
    ),
    Code(
        "SR822",
        "import-worklog-not-tracker",
        E,
        "More than 1,000 lines of the source worklog are not JSON objects: it is not a "
        "session-tracker worklog (a real one has at most a torn last line). Refused before "
        "anything is written: each such line would become a note event, and 1 MB of them "
        "half a million.",
        "worklog.jsonl: 500,000 lines of `x`",
        "Import the right directory, or repair the worklog by hand (keep its JSON lines).",
    ),
    Code(
        "SR830",
        "todo-list-invalid",
        E,
        "The input of `sync-todos` is not a TodoWrite or Tasks list, or holds more than "
        "10,000 items (each would become a step).",
        '{"content": "one item, not a list"}',
        "Pipe a JSON array of {content, status, activeForm} or {id, subject, status} items.",
    ),
    Code(
        "SR831",
        "todo-sync-closed-workflow",
        E,
        "`sync-todos` adds steps, which only a free-steps workflow (generic) allows.",
        "sync-todos on an apex session",
        "Use a session under the `generic` workflow (`session-resume init P --workflow generic`).",
    ),
    Code(
        "SR832",
        "todo-sync-regression-ignored",
        W,
        "The todo list moves a complete or skipped step back; a finished step is not reopened "
        "by a list.",
        'a completed step listed again as "pending"',
        "Re-run it explicitly with `session-resume start STEP --force`.",
    ),
    Code(
        "SR833",
        "todo-sync-too-many-to-pair",
        INFO,
        "Between two anchors of the list, the unmatched items and the previous list's "
        "unclaimed steps are more than 10,000 pairs to compare for likeness (a rename); none "
        "is paired, the items become new steps (comparing them all takes quadratic time).",
        "a new list of 2,000 items replacing a previous list of 2,000 other items",
        "Give the items ids (Tasks `id`), or rename a few items per sync: those are paired.",
    ),
    # --- SR9xx: internal --------------------------------------------------------------------
    Code(
        "SR900",
        "internal-error",
        E,
        "The tool itself failed. This is a bug: please report it.",
        "",
        "Report the message and the file (if you can share it).",
    ),
]

CATALOGUE: dict[str, Code] = {c.code: c for c in _ALL}


def diag(
    code: str,
    message: str,
    *,
    file: str = "",
    pointer: str = "",
    line: int | None = None,
    column: int | None = None,
    hint: str = "",
    severity: Severity | None = None,
) -> Diagnostic:
    """Make a diagnostic whose severity and default hint come from the catalogue."""
    entry = CATALOGUE[code]
    return Diagnostic(
        code=code,
        severity=severity or entry.severity,
        message=message,
        file=file,
        pointer=pointer,
        line=line,
        column=column,
        hint=hint or entry.fix,
    )
