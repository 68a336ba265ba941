// Unit tests of the project configuration (lib/config.mjs, the reference's storage/config.py):
// the values a file sets, the keys' checks, the line a bad key is on, where the root is. The
// CLI's answers with each setting are compared with the Python CLI's in
// tests/test_js_package.py; these pin the reader alone, in a temporary directory.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import {
  ConfigError,
  findRoot,
  keyLine,
  loadConfig,
  stateWorkflowSpec,
  tomlDepth,
} from "../lib/config.mjs";

const base = realpathSync(mkdtempSync(join(tmpdir(), "sr-config-")));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** A fresh repository holding `files`. @param {Record<string, string | Buffer>} files */
function repo(files) {
  const root = join(base, String(n++));
  mkdirSync(join(root, ".git"), { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return root;
}

/** The diagnostic a configuration is refused with. @param {string} root */
function refusal(root) {
  try {
    loadConfig(root);
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostic;
    throw err;
  }
  assert.fail("the configuration was not refused");
}

test("no file: every default, the .git directory the root", () => {
  const root = repo({});
  const cfg = loadConfig(join(root));
  assert.equal(cfg.root, root);
  assert.equal(cfg.source, null);
  assert.deepEqual(
    [cfg.session_root, cfg.max_size, cfg.stale_after_seconds, cfg.select, cfg.ignore],
    ["agent-output", 8 * 1024 * 1024, 300, null, []],
  );
});

test("YAML and pyproject.toml set the same values", () => {
  const yaml = repo({
    ".session-resume.yaml":
      'select: [SR3]\nignore: [SR306]\nmax_size: 1000\n"per-file-ignores": {"a/*": [SR4]}\n',
  });
  const toml = repo({
    "pyproject.toml":
      '[tool.session-resume]\nselect = ["SR3"]\nignore = ["SR306"]\nmax_size = 1000\n' +
      '[tool.session-resume.per-file-ignores]\n"a/*" = ["SR4"]\n',
  });
  for (const root of [yaml, toml]) {
    const cfg = loadConfig(root);
    assert.deepEqual(cfg.select, ["SR3"]);
    assert.deepEqual(cfg.ignore, ["SR306"]);
    assert.equal(cfg.max_size, 1000);
    assert.deepEqual(cfg.per_file_ignores, [["a/*", ["SR4"]]]);
  }
});

test("a float, a boolean or a string is no integer; the message quotes it as Python does", () => {
  for (const [text, words] of [
    ["max_size: 2.0\n", "not 2.0"],
    ["max_size: true\n", "not True"],
    ['max_size: "9"\n', "not '9'"],
    ["max_size: 0\n", "0 is out of range"],
  ]) {
    const d = refusal(repo({ ".session-resume.yaml": text }));
    assert.equal(d.code, "SR405");
    assert.ok(d.message.endsWith(words), d.message);
    assert.equal(d.line, 1);
  }
  const toml = refusal(repo({ "pyproject.toml": "[tool.session-resume]\nmax_size = 1.5\n" }));
  assert.match(toml.message, /not 1\.5$/);
  assert.equal(toml.line, 2);
});

test("an unknown key is refused at its line; a duplicate one at the second", () => {
  const unknown = refusal(repo({ ".session-resume.yaml": "select: [SR3]\nselct: [SR4]\n" }));
  assert.match(unknown.message, /^unknown key 'selct' \(known: workflow, session_root/);
  assert.equal(unknown.line, 2);
  const dup = refusal(repo({ ".session-resume.yaml": "select: [SR3]\nselect: [SR4]\n" }));
  assert.deepEqual([dup.message, dup.line, dup.column], ["duplicate key 'select'", 2, 1]);
});

test("a link leading out of its directory is refused unread (SR105); one inside is read", () => {
  const outside = join(base, `decoy-${n}.yaml`);
  writeFileSync(outside, "select: [SR3]\n");
  const root = repo({});
  symlinkSync(outside, join(root, ".session-resume.yaml"));
  assert.equal(refusal(root).code, "SR105");
  const inside = repo({ "cfg/real.yaml": "select: [SR4]\n" });
  symlinkSync("cfg/real.yaml", join(inside, ".session-resume.yaml"));
  assert.deepEqual(loadConfig(inside).select, ["SR4"]);
});

test("a workflow file outside the repository is refused (SR105); a built-in is kept by name", () => {
  const root = repo({ ".session-resume.yaml": "workflow: ../elsewhere.yaml\n" });
  writeFileSync(join(root, "..", "elsewhere.yaml"), "id: x\n");
  const d = refusal(root);
  assert.deepEqual([d.code, d.line], ["SR105", 1]);
  assert.equal(
    loadConfig(repo({ ".session-resume.yaml": "workflow: generic\n" })).workflow,
    "generic",
  );
});

test("the root: the first directory up with the file, a configuring pyproject.toml or .git", () => {
  const root = repo({ "pyproject.toml": "[tool]\nsession-resume = {select = []}\n", "a/b/x": "" });
  assert.equal(findRoot(join(root, "a", "b")), root);
  const other = repo({ "sub/pyproject.toml": '[project]\nname = "x"\n', "sub/d/x": "" });
  assert.equal(findRoot(join(other, "sub", "d")), other, "a pyproject.toml without our table");
  const broken = repo({ "sub/pyproject.toml": "[tool.session-resume]\na = 1\na = 2\n" });
  assert.equal(findRoot(join(broken, "sub")), broken, "a pyproject.toml that is not TOML");
});

test("keyLine, tomlDepth and stateWorkflowSpec as the reference's", () => {
  assert.equal(keyLine("# c\nselect: [SR3]\n", "yaml", "select"), 2);
  assert.equal(
    keyLine('[project]\nselect = 1\n[tool.session-resume]\n"select" = 2\n', "toml", "select"),
    4,
  );
  assert.equal(tomlDepth('a = [[1], {b = 2}]\ns = "[[[["\n# [[[[\n'), 2);
  assert.equal(stateWorkflowSpec(null, null), "apex");
  assert.equal(stateWorkflowSpec(undefined, "generic"), "generic");
  assert.equal(stateWorkflowSpec("dotagent", "generic"), "dotagent");
  assert.equal(stateWorkflowSpec("/etc/x.yaml", null), null, "a state's workflow is never a path");
});
