// Unit tests of the resume briefing (docs/spec.md §10): what to read now within the step's
// budget, what not to read and why. Pure: the file facts are given.

import assert from "node:assert/strict";
import { test } from "node:test";
import * as sr from "../index.mjs";
import { build } from "../lib/briefing.mjs";

const wf = sr.loadWorkflow("apex");
const doc = sr.templateState(wf, "demo", "2026-03-02T10:00:00Z");
Object.assign(doc.steps["2"], {
  status: "in_progress",
  sub_step: "phase_2_waf",
  started: "2026-03-02T10:00:00Z",
  artifacts: ["docs/arch.md"],
});

test("continuing a step: its partial deliverable first, then the inputs the budget leaves room for", () => {
  const exists = { "docs/arch.md": true, "01-requirements.md": true };
  const b = build(doc, "2", wf, {
    action: "resume_from_checkpoint",
    exists,
    events: [],
    sessionRel: "agent-output/demo",
  });
  // budget 2: the state file is replaced by the briefing and never counts against it
  assert.deepEqual(b.load, [
    { path: "docs/arch.md", why: "partial deliverable of this step: continue it" },
    {
      path: "agent-output/demo/01-requirements.md",
      why: "startup input of this step (workflow budget)",
    },
  ]);
  // the workflow's deliverable drafted by phase_2_waf, not on disk, is named as missing
  assert.deepEqual(b.skip, [
    { path: "agent-output/demo/02-architecture-assessment.md", reason: "listed but not on disk" },
    { path: "agent-output/demo/00-session-state.json", reason: "the briefing carries it" },
  ]);
  // over the budget: a second partial deliverable leaves no room for the input, and the reason
  // claims nothing the tool cannot know
  const two = {
    ...doc,
    steps: { ...doc.steps, 2: { ...doc.steps["2"], artifacts: ["docs/arch.md", "docs/b.md"] } },
  };
  const over = build(two, "2", wf, {
    action: "resume_from_checkpoint",
    exists: { ...exists, "docs/b.md": true },
    events: [],
    sessionRel: ".",
  });
  assert.match(over.skip[2].reason, /^over the step's budget of 2 startup files/);
  assert.doesNotMatch(over.skip[2].reason, /already/);
  assert.deepEqual(b.last_checkpoint, {
    id: "phase_2_waf",
    after: "Well-Architected Framework assessment drafted",
  });
  assert.equal(b.next_checkpoint.id, "phase_3_cost");
});

test("starting a step: no checkpoint yet, the first one next, a missing input skipped", () => {
  const b = build(doc, "2", wf, {
    action: "restart_step",
    exists: {},
    events: [],
    sessionRel: ".",
  });
  assert.equal(b.last_checkpoint, null);
  assert.equal(b.next_checkpoint.id, "phase_1_prereqs");
  assert.deepEqual(b.load, []);
  // the step is in progress: its recorded artifact, not on disk, is named as missing first
  // (as the reference's briefing does), then the budget's startup files
  assert.deepEqual(b.skip, [
    { path: "docs/arch.md", reason: "listed but not on disk" },
    { path: "00-session-state.json", reason: "the briefing carries it" },
    { path: "01-requirements.md", reason: "listed but not on disk" },
  ]);
});

test("the last five events and decision-log entries, the step's review audit", () => {
  const events = Array.from({ length: 8 }, (_, i) => ({ seq: i + 1, event: "checkpoint" }));
  const logged = {
    ...doc,
    decision_log: Array.from({ length: 7 }, (_, i) => ({ id: `D00${i + 1}` })),
    review_audit: { step_2: { passes: 1 } },
  };
  const b = build(logged, "2", wf, {
    action: "resume_from_checkpoint",
    exists: {},
    events,
    sessionRel: null,
  });
  assert.deepEqual(
    b.last_events.map((e) => e.seq),
    [4, 5, 6, 7, 8],
  );
  assert.deepEqual(
    b.decision_log.map((e) => e.id),
    ["D003", "D004", "D005", "D006", "D007"],
  );
  assert.deepEqual(b.review_audit, { passes: 1 });
});
