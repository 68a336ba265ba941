// Unit tests of the migration (docs/spec.md §9): refusal and salvage of contradictions, the
// x-legacy asides, repairCommand (§9.5) and a usable older .bak (§5). node --test, no mocks.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import * as sr from "../index.mjs";

const now = sr.parseNow("2026-03-02T12:00:00Z");
const dirs = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A 1.0 state: step 1 complete, steps 2 and 3 as given. */
function v1(step2, step3) {
  const step = (name, s) => ({
    name,
    sub_step: null,
    started: null,
    completed: null,
    artifacts: [],
    ...s,
  });
  return {
    schema_version: "1.0",
    project: "demo",
    updated: "2026-02-27T10:00:00Z",
    current_step: 2,
    decisions: {},
    open_findings: [],
    steps: {
      1: step("Requirements", {
        status: "complete",
        started: "2026-02-26T09:00:00Z",
        completed: "2026-02-26T10:00:00Z",
      }),
      2: step("Architecture", step2),
      3: step("Design", step3),
    },
  };
}
const running = (sub) => ({
  status: "in_progress",
  sub_step: sub,
  started: "2026-02-27T10:00:00Z",
});

test("two steps in progress: one SR152 naming --salvage, nothing kept", () => {
  const doc = v1(running("phase_2_waf"), running("phase_2_diagram"));
  assert.throws(
    () => sr.migrateDocument(doc, { now, file: "x/00-session-state.json" }),
    (err) => {
      assert.ok(err instanceof sr.MigrationError);
      assert.deepEqual(err.codes, ["SR152"]);
      assert.match(
        err.diagnostics[0].message,
        /SR306.*session-resume migrate --salvage x\/00-session-state\.json/,
      );
      return true;
    },
  );
});

test("salvage: the earlier in-progress step becomes pending, its values under x-legacy", () => {
  const out = sr.migrateDocument(v1(running("phase_2_waf"), running("phase_2_diagram")), {
    now,
    salvage: true,
  });
  const s2 = out.document.steps["2"];
  assert.equal(s2.status, "pending");
  assert.deepEqual(s2["x-legacy"], {
    status: "in_progress",
    started: "2026-02-27T10:00:00Z",
    sub_step: "phase_2_waf",
  });
  assert.equal(out.document.current_step, 3);
  assert.deepEqual(out.document["x-legacy"], { updated: "2026-02-27T10:00:00Z", current_step: 2 });
  assert.equal(out.document.revision, 1);
  assert.equal(out.document.updated, "2026-03-02T12:00:00Z");
  assert.ok(
    out.notes.filter((n) => n.code === "SR151").length >= 3,
    "one SR151 per value kept aside",
  );
});

test("a complete step's sub_step is kept as x-legacy.sub_step", () => {
  const doc = v1(
    {
      status: "complete",
      sub_step: "phase_4_done",
      started: "2026-02-27T09:00:00Z",
      completed: "2026-02-27T10:00:00Z",
    },
    { status: "pending" },
  );
  const out = sr.migrateDocument(doc, { now });
  assert.equal(out.document.steps["2"].sub_step, null);
  assert.deepEqual(out.document.steps["2"]["x-legacy"], { sub_step: "phase_4_done" });
});

test("repairCommand: migrate, migrate --salvage, or nothing to say", () => {
  const wf = sr.loadWorkflow("apex");
  const valid = { ...sr.templateState(wf, "demo", "2026-03-02T10:00:00Z"), revision: 1 };
  assert.equal(sr.repairCommand(valid, { now }), null, "a valid state needs no repair");
  const dotted = structuredClone(valid);
  dotted.decision_log = [
    { decision: "use bicep", rationale: "team", step: 3.5, timestamp: "2026-03-01T10:00:00Z" },
  ];
  assert.equal(sr.repairCommand(dotted, { now }), "migrate");
  const contradicting = structuredClone(dotted);
  Object.assign(contradicting.steps["3"], {
    status: "complete",
    started: "2026-03-01T12:00:00Z",
    completed: "2026-03-01T10:00:00Z",
  });
  assert.equal(sr.repairCommand(contradicting, { now }), "migrate --salvage");
});

test("recover migrates an older .bak and restores it", () => {
  const dir = mkdtempSync(join(tmpdir(), "sr-js-mig-"));
  dirs.push(dir);
  writeFileSync(join(dir, "00-session-state.json"), "{ not json");
  writeFileSync(
    join(dir, "00-session-state.json.bak"),
    JSON.stringify(v1({ status: "pending" }, { status: "pending" })),
  );
  const res = sr.recover(dir, { now, root: dir });
  assert.equal(res.status, "restored_backup");
  assert.equal(res.migratedFrom, "1.0");
  const state = JSON.parse(readFileSync(join(dir, "00-session-state.json"), "utf8"));
  assert.equal(state.schema_version, sr.CURRENT);
  assert.deepEqual(
    sr.validate(dir, { now, root: dir }).filter((c) => c.startsWith("SR1") || c.startsWith("SR3")),
    [],
  );
});

test("a step time that is no real instant is kept under x-legacy, never rolled over", () => {
  const doc = v1(
    { status: "complete", started: "2026-02-30T09:00:00Z", completed: "2026-02-27T10:00:00+01:00" },
    { status: "pending" },
  );
  const step = sr.migrateDocument(doc, { now }).document.steps["2"];
  assert.equal(step.started, null);
  assert.deepEqual(step["x-legacy"], { started: "2026-02-30T09:00:00Z" });
  assert.equal(step.completed, "2026-02-27T09:00:00Z", "an offset is converted to Z");
});

test("a 3.0 step without a status becomes pending, the missing status kept as null", () => {
  const doc = {
    ...sr.templateState(sr.loadWorkflow("apex"), "demo", "2026-03-02T10:00:00Z"),
    revision: 1,
  };
  delete doc.steps["3"].status;
  const step = sr.migrateDocument(doc, { now }).document.steps["3"];
  assert.equal(step.status, "pending");
  assert.deepEqual(step["x-legacy"], { status: null });
});
