// The words of a resume answer's codes (docs/spec.md §10.3), pure: each entry of `reasons` and
// `warnings` is {code, message, hint}, the message written for this finding (the step, the
// file, the session, the dates), the hint what to do about it. The catalogue's summary and fix
// are the fallback for a code without its own words here. A port of the reference's
// validator/session_resume/core/resume_messages.py, function for function: change both.

import { CODES } from "./codes.mjs";
import { shellQuote } from "./findings.mjs";
import { formatTimestamp, parseTimestamp } from "./timeutil.mjs";

/** @typedef {Record<string, any>} Facts */

/** @param {Facts} f */
function step(f) {
  const name = f.step_name;
  return `step ${str(f.step)}${name ? ` (${name})` : ""}`;
}

/** @param {Facts} f */
function holder(f) {
  const lease = f.lease ?? {};
  const age = lease.age_seconds;
  return `session ${str(lease.session)} (owner ${lease.owner || "?"}${age !== null && age !== undefined ? `, heartbeat ${age} s ago` : ""})`;
}

/** When the live lease turns stale if its session stops, and the threshold. @param {Facts} f */
function goesStale(f) {
  const lease = f.lease ?? {};
  const stale = f.stale_seconds;
  let hb = null;
  try {
    hb = typeof lease.heartbeat === "string" ? parseTimestamp(lease.heartbeat) : null;
  } catch {
    hb = null;
  }
  const at =
    hb !== null && Number.isInteger(stale) ? ` at ${formatTimestamp(hb + stale * 1e6)}` : "";
  return `; its lease goes stale${at} unless it writes or pings again (the stale threshold: ${stale} s after the last heartbeat, \`stale_after_seconds\` in the config)`;
}

/** @param {unknown} holder */
function sr511Hint(holder) {
  return `session ${str(holder)} is yours only if its id appears earlier in this conversation or in your notes (a \`session start\` you ran printed it): then ask again with \`--session ${shellQuote(str(holder))}\`. If you cannot find it there, it is not yours: write nothing; ask again when the lease goes stale, or take over only with the user's consent (the commands below)`;
}

/** @param {Facts} f @param {string} key */
const paths = (f, key) => (f[key] ?? []).join(", ") || "?";

/** The checkpoints whose work wrote the missing file, as SR714's hint names them.
 * @param {Facts} f */
function redo(f) {
  const done = f.done_checkpoints ?? [];
  if (done.length === 0) return "the checkpoints up to that one";
  return (done.length === 1 ? "checkpoint " : "checkpoints ") + done.join(", ");
}

/** @param {unknown} v */
const str = (v) => (v === null || v === undefined ? "None" : String(v));

/** Which files to read and what to redo after the recorded checkpoint, in plain words.
 * @param {Facts} f */
function sr703(f) {
  // a partial file says there "(partial: continue it)"
  const read = f.read_now?.length
    ? "read only what `read now` lists"
    : "read no file beyond this answer";
  const redo = f.missing?.length ? "redo only the missing file SR714 names" : "redo nothing";
  return `${read}; ${redo}; next: ${f.next_checkpoint ? `checkpoint ${f.next_checkpoint}` : "finish the step"}`;
}

/** @param {Facts} f @returns {[string, string]} */
function sr708(f) {
  const rel = f.session_rel ? String(f.session_rel) : null;
  // a name from disk: one shell word, as the reference quotes it
  const where = rel ? shellQuote(rel) : "the session directory";
  const since = str(f.updated);
  const when = f.resumed ? `this session resumed it at ${f.resumed}` : `now (${str(f.now)})`;
  const n = f.commits;
  const moved =
    n === 0
      ? `git shows no other commit since then outside ${where}`
      : Number.isInteger(n)
        ? `git shows ${n} commit${n !== 1 ? "s" : ""} since then outside ${where}`
        : "no git history here tells whether the project moved on";
  const log =
    n && rel
      ? ` (\`git log --oneline --since=${since} -- . ${shellQuote(`:(exclude)${rel}`)}\` lists them)`
      : "";
  const away = f.stale_finding
    ? "continue, and run the command below whose condition says so: a finding the user sees at the next gate"
    : "write nothing until the user answers";
  return [
    `the state was last worked on ${since}, ${str(f.age_days)} days before ${when}; ${moved}`,
    `ask the user whether the work is still wanted and what changed${log}; if the user cannot be asked now, ${away}`,
  ];
}

/** @type {Record<string, (f: Facts) => [string, string]>} */
const WORDS = {
  SR700: (f) => [
    "there is no state file in the session directory (or no session directory yet): nothing has been recorded yet",
    f.step
      ? "run the commands in order: `init` creates the state and takes the lease of the session the commands name, then the first step starts"
      : "create the state first (the command below), then ask `resume` again",
  ],
  SR701: (f) => [
    `${step(f)} has not started`,
    "run the commands in order: start the step, then do each checkpoint's work before its write",
  ],
  SR702: (f) => [
    `${step(f)} is in progress with no checkpoint recorded, and no live session of yours started it: its earlier attempt stopped before its first checkpoint`,
    "start it again from its beginning (the first command), then follow the plan",
  ],
  SR703: (f) => [`${step(f)} is in progress after checkpoint ${str(f.sub_step)}`, sr703(f)],
  SR704: (f) => [
    `${step(f)} is complete${f.gate_open ? `; its ${f.gate_open} is still open` : ""}`,
    `${
      f.gate_open
        ? `ask the user's approval of ${f.gate_open} once (show the deliverables and open findings); record its empty decisions only with the user's choice, then the approval (\`approve\`, in the commands); no other work on this step; `
        : "nothing to do for it; "
    }run it again only if the user asks (the command needs their consent)`,
  ],
  SR705: (f) => [
    `${step(f)} was skipped`,
    f.next_step ? `go on to step ${f.next_step}` : "no step is left",
  ],
  SR706: (f) => [
    `earlier steps are neither complete nor skipped: ${paths(f, "incomplete")}`,
    `finish them first (ask \`resume\` without --step), or, only with the user's consent, start this step anyway: \`session-resume start ${str(f.step)} --force\``,
  ],
  SR707: () => ["every step of the workflow is complete or skipped", "nothing is left to run"],
  SR708: sr708,
  SR709: (f) => [
    `step ${paths(f, "running")} is in progress, not ${step(f)}`,
    "finish the step in progress first, or ask `resume` without --step",
  ],
  SR711: (f) => [
    `step ${str(f.step)} is not a step of workflow ${str(f.workflow)}`,
    `use one of its steps: ${paths(f, "step_keys")}`,
  ],
  SR712: (f) => [
    `${step(f)} was started at a gate by \`transition\` and recorded no work: this is its first real start, not a restart`,
    "run the commands in order; the start costs no attempt",
  ],
  SR713: (f) => [
    `${step(f)} was just started by session ${str(f.session)}, the live session asking: it recorded no checkpoint yet`,
    "do not start it again: do the first checkpoint's work, then run its write",
  ],
  SR714: (f) => [
    `${step(f)} is past checkpoint ${str(f.sub_step)}, but ${paths(f, "missing")} (recorded at a checkpoint, or a deliverable the workflow says its work wrote by then) is not on disk`,
    `resume after checkpoint ${str(f.sub_step)} as planned, but first write the missing file again (restore it from version control if it was committed, else redo the work of ${redo(f)} that wrote it, keeping every file on disk as it is); record no checkpoint before it exists`,
  ],
  SR720: (f) => [
    `${step(f)} was paused ${f.sub_step ? `at checkpoint ${str(f.sub_step)}` : "before its first checkpoint"} by the last session (\`session end --reason paused\`), not crashed`,
    "continue it from there: read what this answer lists, then run the commands in order",
  ],
  SR718: (f) => [
    `the worklog records checkpoint ${str(f.worklog_checkpoint)} of ${step(f)}, later than the state's ${f.sub_step || "start of the step"} (an older \`.bak\` was restored, or the state lost a write): its work may be on disk`,
    `check whether the work of ${str(f.worklog_checkpoint)} is done: the files it wrote that are on disk are listed to read now (none listed: it left none). If it is done, run the \`checkpoint ${str(f.step)} ${str(f.worklog_checkpoint)}\` line of the commands now (with \`--artifact\` per file it wrote that the line does not name); if not, or if that work leaves nothing on disk, redo it first, then run that line`,
  ],
  SR715: (f) => [
    `deliverables of completed earlier steps (recorded, or named by the workflow) are not on disk: ${paths(f, "prereq_missing")}`,
    "restore them (version control) before relying on them; if they cannot be restored, ask the user before re-running the step that wrote them (`start STEP --force`)",
  ],
  SR716: (f) => [
    `step ${f.short.step} was completed ${f.short.sub_step ? `at checkpoint ${f.short.sub_step}` : "with no checkpoint recorded"}: ${f.short.unrecorded.join(", ")} never recorded`,
    `tell the user at the gate before the next step starts (that work may be missing); re-run step ${f.short.step} only with the user's consent (\`start ${f.short.step} --force\`)`,
  ],
  SR511: (f) => [
    `${holder(f)} holds a live lease on this session directory${goesStale(f)}`,
    sr511Hint(f.lease?.session),
  ],
  SR512: (f) => [
    `${holder(f)} left its lease without ending: it stopped ${f.orphan_step ? `in step ${f.orphan_step}` : "with no step in progress that the state shows"}`,
    (f.own
      ? "it is the session you named: your first write renews its lease (no takeover)"
      : "the first write takes it over (logged)") +
      "; check the files it may have left incomplete first (`possibly incomplete`; none listed: nothing to check)",
  ],
  SR513: () => [
    "a lease file remains although its session ended",
    "nothing to do: the next session start replaces it",
  ],
  SR510: () => ["00-session.active is not a valid lease", "the next session start replaces it"],
  SR170: (f) => [
    `an interrupted write left a temp file: ${paths(f, "temp_files")}`,
    "it is never read as state; delete it once no writer is running",
  ],
  SR130: () => [
    "the state file is corrupt or missing, and its .bak is a valid state",
    "run `recover` (the command below): it restores .bak and keeps the corrupt file; then ask `resume` again",
  ],
  SR140: () => [
    "the state file has an older schema version",
    "run `migrate` (the command below; the original is kept), then ask `resume` again",
  ],
  SR141: () => [
    "the state file's schema version is newer than this tool knows",
    "write nothing; upgrade session-resume",
  ],
  SR306: (f) => [
    `more than one step is in progress: ${paths(f, "running")}`,
    "a session runs one step at a time: complete or skip all but one",
  ],
};

/** {code, message, hint} for `code` as found in this decision (`facts`).
 * @param {string} code @param {Facts} facts */
export function explain(code, facts) {
  const words = WORDS[code];
  if ((facts.state_codes ?? []).includes(code) && facts.action === "needs_recovery") {
    // The catalogue's fix may say "edit at the line and column": an agent must not edit the
    // state by hand, and a truncated file has no such place.
    const entry = CODES[code];
    let summary = entry ? entry.summary.replace(/\.+$/, "") : code;
    summary = summary.slice(0, 1).toLowerCase() + summary.slice(1);
    return {
      code,
      message: `the state file 00-session-state.json cannot be used: ${summary}`,
      hint: "do not edit the state file by hand: run the commands below (`recover` keeps the broken file and restores the last good copy)",
    };
  }
  if (words) {
    const [message, hint] = words(facts);
    return { code, message, hint };
  }
  const entry = CODES[code];
  return {
    code,
    message: entry ? entry.summary : code,
    hint: entry ? entry.fix : `see docs/codes/${code}.md`,
  };
}
