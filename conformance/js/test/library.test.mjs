// Unit tests of the library (node --test). Real files in temporary directories, no mocks.

import assert from "node:assert/strict";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import * as sr from "../index.mjs";
import { readJsonBytes } from "../lib/jsonread.mjs";
import { jsonPatch } from "../lib/patch.mjs";
import { parseYaml } from "../lib/yaml.mjs";

const dirs = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "sr-js-"));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const T0 = sr.parseNow("2026-03-02T10:00:00Z");
const at = (minutes) => T0 + minutes * 60e6;

// --- YAML -----------------------------------------------------------------------------------

const yamlCode = (text) => {
  try {
    parseYaml(text);
    return null;
  } catch (err) {
    return err.code;
  }
};

test("yaml: the core schema, as the reference resolves plain scalars", () => {
  assert.deepEqual(
    parseYaml("a: 1\nb: 0x1f\nc: 1.5\nd: true\ne: ~\nf: 2026-03-02\ng: '1'\nh: .inf\n"),
    {
      a: 1,
      b: 31,
      c: 1.5,
      d: true,
      e: null,
      f: "2026-03-02",
      g: "1",
      h: Infinity,
    },
  );
  assert.deepEqual(parseYaml("? key\n: value\n"), { key: "value" });
  assert.deepEqual(parseYaml("a: >+\n\n  x\nb: 1\n"), { a: "\nx\n", b: 1 });
  assert.deepEqual(parseYaml("<<: 1\n"), { "<<": 1 }, "no merge keys");
});

test("yaml: tags SR400, anchors and aliases SR402, duplicates SR401, syntax SR400", () => {
  assert.equal(yamlCode("a: !!str 1\n"), "SR400");
  assert.equal(yamlCode("a: !custom x\n"), "SR400");
  assert.equal(yamlCode("a: &x 1\n"), "SR402");
  assert.equal(
    yamlCode("a: 1\nb: *x\n"),
    "SR402",
    "an alias, even to nothing, is refused as an alias (as the reference)",
  );
  assert.equal(yamlCode("a: 1\na: 2\n"), "SR401");
  assert.equal(yamlCode("true: a\n1: b\n"), "SR401", "true and 1 are one key to the reference");
  assert.equal(yamlCode('1: a\n"1": b\n'), null, "an integer key and a string key differ");
  assert.equal(yamlCode("a: -\n"), "SR400");
  assert.equal(yamlCode("a: 1\n---\nb: 2\n"), "SR400");
});

// --- strict JSON --------------------------------------------------------------------------

test("json: duplicate keys with their offsets, lone surrogates, non-finite numbers", () => {
  const dup = readJsonBytes(Buffer.from('{"a": 1, "a": 2}'));
  assert.deepEqual(dup.codes, ["SR121"]);
  assert.deepEqual(dup.duplicateAt, [{ key: "a", offset: 9, pointer: "/a" }]);
  // the pointer of a nested duplicate walks objects and arrays (RFC 6901 escapes)
  const nested = readJsonBytes(Buffer.from('{"s": [0, {"a/b": {"k": 1, "k": 2}}]}'));
  assert.deepEqual(
    nested.duplicateAt.map((d) => d.pointer),
    ["/s/1/a~1b/k"],
  );
  assert.deepEqual(readJsonBytes(Buffer.from('{"p": "\\ud800"}')).codes, ["SR116"]);
  assert.deepEqual(readJsonBytes(Buffer.from('{"p": "\\ud83d\\ude00"}')).codes, []);
  assert.deepEqual(readJsonBytes(Buffer.from('{"n": NaN}')).codes, ["SR122"]);
  assert.deepEqual(readJsonBytes(Buffer.from("[1]")).codes, ["SR124"]);
  assert.deepEqual(readJsonBytes(Buffer.from("")).codes, ["SR110"]);
});

// --- versions and workflows -----------------------------------------------------------------

test("versions: one registry; the last is current; numbers, not strings, compare", () => {
  assert.equal(sr.CURRENT, sr.KNOWN[sr.KNOWN.length - 1]);
  assert.deepEqual(sr.versionOf({}), { raw: "1.0", num: [1, 0] });
  assert.deepEqual(sr.versionOf({ schema_version: 3 }), { invalid: true });
  const schemas = readdirSync(join(sr.getSchemaDir(), "session-state"))
    .map((n) => n.replace(/\.json$/, ""))
    .sort();
  assert.deepEqual(schemas, [...sr.KNOWN].sort(), "one schema file per registered version");
});

test("workflows: the built-ins are the YAML files of schema/workflows", () => {
  const files = readdirSync(join(sr.getSchemaDir(), "workflows"))
    .filter((n) => n.endsWith(".yaml"))
    .map((n) => n.slice(0, -5))
    .sort();
  assert.deepEqual(sr.builtins(), files);
  for (const id of files) assert.equal(sr.loadWorkflow(id).id, id);
  assert.throws(
    () => sr.loadWorkflow("no-such-workflow"),
    (err) => err.codes[0] === "SR403",
  );
});

test("workflows: adding a YAML file adds a built-in (schema dir override)", () => {
  const d = tmp();
  const src = sr.getSchemaDir();
  cpSync(src, d, { recursive: true });
  writeFileSync(
    join(d, "workflows", "tiny.yaml"),
    readFileSync(join(src, "workflows", "generic.yaml"), "utf8").replace(
      /^id: generic$/m,
      "id: tiny",
    ),
  );
  sr.setSchemaDir(d);
  try {
    assert.ok(sr.builtins().includes("tiny"));
    assert.equal(sr.loadWorkflow("tiny").id, "tiny");
  } finally {
    sr.setSchemaDir(src);
  }
  assert.ok(!sr.builtins().includes("tiny"));
});

// --- the write moments ------------------------------------------------------------------------

const state = (dir) => JSON.parse(readFileSync(join(dir, "00-session-state.json"), "utf8"));
const worklog = (dir) =>
  readFileSync(join(dir, "00-worklog.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

test("write moments: init, start, checkpoint, complete; revision, .bak and one event each", () => {
  const dir = join(tmp(), "agent-output", "demo");
  const ctx = (m) => ({ dir, now: at(m), session: "s1", root: join(dir, "..", "..") });
  const r0 = sr.init(ctx(0), "demo");
  assert.equal(r0.revision, 1);
  assert.equal(r0.lease, "create");
  assert.equal(state(dir).workflow, "apex");
  // a new session writes its directory's .gitignore: this machine's files (spec §1)
  const ignored = readFileSync(join(dir, ".gitignore"), "utf8").split("\n");
  for (const name of [
    "00-session-state.json.lock",
    "00-session.active",
    "00-session-state.json.bak",
  ]) {
    assert.ok(ignored.includes(name), `.gitignore names ${name}`);
  }
  const r1 = sr.start(ctx(1), "1");
  assert.equal(r1.lease, "keep");
  assert.equal(state(dir).steps["1"].status, "in_progress");
  assert.equal(
    JSON.parse(readFileSync(join(dir, "00-session-state.json.bak"), "utf8")).revision,
    1,
    ".bak is the previous valid state",
  );
  sr.checkpoint(
    ctx(2),
    "1",
    state(dir).steps["1"].sub_step ?? sr.loadWorkflow("apex").step("1").checkpoints[0],
    { artifacts: ["docs/a.md", "docs/./a.md"] },
  );
  assert.deepEqual(state(dir).steps["1"].artifacts, ["docs/a.md"], "deduplicated by normal form");
  const r3 = sr.complete(ctx(3), "1");
  assert.equal(r3.revision, 4);
  assert.equal(state(dir).steps["1"].status, "complete");
  assert.equal(state(dir).steps["1"].sub_step, null);
  assert.deepEqual(
    worklog(dir).map((e) => [e.seq, e.event]),
    [
      [1, "session_start"],
      [2, "step_start"],
      [3, "checkpoint"],
      [4, "step_complete"],
    ],
  );
  const lease = JSON.parse(readFileSync(join(dir, "00-session.active"), "utf8"));
  assert.equal(lease.session, "s1");
  assert.equal(lease.heartbeat, "2026-03-02T10:03:00Z", "every write refreshes the heartbeat");
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.endsWith(".tmp") || n.endsWith(".jslock")),
    [],
    "no temp file left",
  );
  assert.deepEqual(sr.validate(dir, { now: at(4), root: join(dir, "..", "..") }), []);
});

test("write moments: refusals are coded and write nothing", () => {
  const dir = tmp();
  const ctx = (m, session = "s1") => ({ dir, now: at(m), session, root: dir });
  assert.throws(
    () => sr.start(ctx(0), "1"),
    (e) => e.codes[0] === "SR161",
    "no state yet",
  );
  sr.init(ctx(0), "demo");
  const before = readFileSync(join(dir, "00-session-state.json"));
  assert.throws(
    () => sr.complete(ctx(1), "1"),
    (e) => e.codes[0] === "SR710",
  );
  assert.throws(
    () => sr.start(ctx(1), "2"),
    (e) => e.codes[0] === "SR710",
    "earlier steps not done",
  );
  assert.throws(
    () => sr.start(ctx(1), "99"),
    (e) => e.codes[0] === "SR711",
  );
  assert.throws(
    () => sr.checkpoint(ctx(1), "1", "x"),
    (e) => e.codes[0] === "SR710",
  );
  assert.throws(
    () => sr.decide(ctx(1), "iac_tool", "pulumi"),
    (e) => e.codes[0] === "SR420",
  );
  assert.throws(
    () => sr.finding(ctx(1), "resolve", "nope"),
    (e) => e.codes[0] === "SR710",
  );
  assert.throws(
    () => sr.start(ctx(1, "other"), "1"),
    (e) => e.codes[0] === "SR511",
    "a live lease of another session",
  );
  assert.throws(
    () => sr.init(ctx(1), "demo"),
    (e) => e.codes[0] === "SR710",
    "init over an existing state",
  );
  assert.deepEqual(readFileSync(join(dir, "00-session-state.json")), before);
});

test("save: a stale expected revision is SR162; an invalid document is never written", () => {
  const dir = tmp();
  sr.init({ dir, now: at(0), session: "s1", root: dir }, "demo");
  const doc = state(dir);
  assert.throws(
    () => sr.save(dir, doc, { now: at(1), expectedRevision: 0 }),
    (e) => e.codes[0] === "SR162",
  );
  assert.throws(
    () => sr.save(dir, { ...doc, current_step: "x" }, { now: at(1), expectedRevision: 1 }),
    (e) => e.codes[0] === "SR161",
  );
  assert.equal(state(dir).revision, 1);
  assert.equal(sr.save(dir, doc, { now: at(1), expectedRevision: 1 }).revision, 2);
});

test("lock (flock, as the reference): held while the function runs, SR160 when it cannot be taken", () => {
  const dir = tmp();
  const inner = sr.withLock(dir, () => {
    assert.throws(
      () => sr.withLock(dir, () => 1, { timeoutMs: 50 }),
      (e) => e.codes[0] === "SR160",
    );
    return 7;
  });
  assert.equal(inner, 7);
  assert.equal(
    sr.withLock(dir, () => 8, { timeoutMs: 1000 }),
    8,
    "released after",
  );
  assert.ok(existsSync(join(dir, "00-session-state.json.lock")), "the reference's lock file");
});

test("lock (exclusive file, without flock): SR160 when taken, broken when its holder is dead", () => {
  const dir = tmp();
  process.env.SESSION_RESUME_JS_LOCK = "file";
  try {
    const inner = sr.withLock(dir, () => {
      assert.ok(existsSync(join(dir, "00-session-state.json.jslock")));
      assert.throws(
        () => sr.withLock(dir, () => 1, { timeoutMs: 50 }),
        (e) => e.codes[0] === "SR160",
      );
      return 7;
    });
    assert.equal(inner, 7);
    assert.ok(!existsSync(join(dir, "00-session-state.json.jslock")));
    writeFileSync(
      join(dir, "00-session-state.json.jslock"),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), since: Date.now() }),
    );
    assert.equal(
      sr.withLock(dir, () => 8, { timeoutMs: 50 }),
      8,
      "a dead holder's lock is broken",
    );
  } finally {
    delete process.env.SESSION_RESUME_JS_LOCK;
  }
});

test("transitions are pure: the input document is not changed", () => {
  const wf = sr.loadWorkflow("apex");
  const doc = sr.templateState(wf, "demo", "2026-03-02T10:00:00Z");
  const copy = structuredClone(doc);
  const started = sr.transitions.start(doc, wf, "1", at(1));
  assert.deepEqual(doc, copy);
  assert.equal(started.steps["1"].attempts, 1);
  const logged = sr.transitions.logDecision(
    started,
    { title: "t", choice: "c", rationale: "r", step: "1" },
    at(2),
    wf,
  );
  assert.equal(logged.decision_log[0].id, "D001");
  assert.equal(logged.decision_log[0].step, 1, "an integer step key is written as an integer");
});

test("patch: add, remove and replace, applied in order, turn one document into the other", () => {
  const a = { x: 1, y: { z: [1, 2] }, gone: true };
  const b = { x: 2, y: { z: [1, 3], w: "new" } };
  const ops = jsonPatch(a, b);
  assert.deepEqual(ops.map((o) => o.op).sort(), ["add", "remove", "replace", "replace"]);
});

// --- the command line -------------------------------------------------------------------------

test("cli: usage errors exit 2, internal errors never throw", () => {
  assert.equal(sr.cli(["no-such-command"]), 2);
  assert.equal(sr.cli(["validate", "--format", "xml", "."]), 2);
  assert.equal(sr.cli(["start", "1"]), 2, "no --session-dir or --project");
});
