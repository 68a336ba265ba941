// Bugs the type checker found when strictNullChecks was turned on (tsconfig.lib.json), each
// with the test that shows it fixed. Real files in temporary directories, no mocks.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import * as sr from "../index.mjs";

const CLI = fileURLToPath(new URL("../bin/session-resume.mjs", import.meta.url));
const dirs = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const NOW = sr.parseNow("2026-03-02T12:00:00Z");

/** A session directory holding a valid generic state with one step in progress. */
function session({ updated = "2026-03-02T11:00:00Z", artifacts = [] } = {}) {
  const root = mkdtempSync(join(tmpdir(), "sr-js-null-"));
  dirs.push(root);
  mkdirSync(join(root, ".git"));
  const dir = join(root, "agent-output", "demo");
  mkdirSync(dir, { recursive: true });
  const doc = sr.templateState(sr.loadWorkflow("generic"), "demo", updated);
  doc.revision = 1;
  doc.current_step = 1;
  doc.steps = {
    1: {
      name: "One",
      agent: "",
      status: "in_progress",
      sub_step: null,
      started: "2026-03-02T10:00:00Z",
      completed: null,
      artifacts,
      context_files_used: [],
    },
  };
  const state = join(dir, "00-session-state.json");
  writeFileSync(state, sr.serialize(doc));
  return { root, dir, state };
}

test("validate without a skew still reports a timestamp in the future (SR305)", () => {
  // opts.skew was optional but read as a number: now + undefined * 1e6 is NaN, so no
  // timestamp was ever later than it; the reference's default skew is 5 minutes
  const ahead = session({ updated: "2026-03-02T13:00:00Z" });
  assert.deepEqual(sr.validate(ahead.state, { now: NOW, root: ahead.root }), ["SR305"]);
  const within = session({ updated: "2026-03-02T12:04:00Z" });
  assert.deepEqual(sr.validate(within.state, { now: NOW, root: within.root }), []);
  assert.deepEqual(sr.validate(within.state, { now: NOW, root: within.root, skew: 0 }), ["SR305"]);
});

test("the validate command reports SR305 as the reference's does (it passes no skew)", () => {
  const { root, state } = session({ updated: "2026-03-02T13:00:00Z" });
  const proc = spawnSync(
    process.execPath,
    [CLI, "validate", state, "--format", "json", "--now", "2026-03-02T12:00:00Z"],
    { cwd: root, encoding: "utf8" },
  );
  assert.equal(proc.status, 1, proc.stderr);
  const report = JSON.parse(proc.stdout);
  assert.deepEqual(
    report.files[0].diagnostics.map((/** @type {{code: string}} */ d) => d.code),
    ["SR305"],
  );
});

test("validate checkArtifacts without a root looks in the current directory, never throws", () => {
  // opts.root was optional but passed on to path.join: a TypeError instead of a report
  const { state } = session({ artifacts: ["agent-output/demo/missing.md"] });
  assert.deepEqual(sr.validate(state, { now: NOW, checkArtifacts: true }), ["SR314"]);
});

test("validateDocument checkArtifacts without a session directory looks in the root only", () => {
  // opts.sessionDir is optional (index.d.ts), but a bare artifact name was joined to it: a
  // TypeError instead of a report
  const { root, state } = session({ artifacts: ["notes.md"] });
  const data = readFileSync(state);
  const opts = { now: NOW, root, checkArtifacts: true };
  assert.deepEqual(sr.validateDocument(data, opts), ["SR314"]);
  writeFileSync(join(root, "notes.md"), "# notes\n");
  assert.deepEqual(sr.validateDocument(data, opts), []);
});
