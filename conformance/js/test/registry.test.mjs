// Adding a state version is a schema file, one registry line (lib/versions.mjs) and one
// migration step (STEPS in lib/migrate.mjs): a copy of the package with a toy 4.0 migrates a
// 3.0 state through it, and writes 4.0 states, with no other change.

import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { test } from "node:test";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repo = resolve(pkg, "..", "..");

/** @param {string} file @param {string} from @param {string} to */
function replaceOnce(file, from, to) {
  const text = readFileSync(file, "utf8");
  assert.ok(text.includes(from), `${file} no longer holds ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

test("a toy version 4.0 is one registry line, one migration step and its schema", async () => {
  const d = mkdtempSync(join(tmpdir(), "sr-js-v4-"));
  try {
    cpSync(join(pkg, "lib"), join(d, "lib"), { recursive: true });
    cpSync(join(pkg, "index.mjs"), join(d, "index.mjs"));
    cpSync(join(pkg, "package.json"), join(d, "package.json"));
    cpSync(join(repo, "schema"), join(d, "schema"), { recursive: true }); // the bundled place
    symlinkSync(join(repo, "node_modules"), join(d, "node_modules"), "dir");
    // the schema of 4.0: 3.0's, with its version
    const v3 = JSON.parse(readFileSync(join(d, "schema", "session-state", "3.0.json"), "utf8"));
    v3.$id = v3.$id.replace("3.0", "4.0");
    v3.properties.schema_version.const = "4.0";
    delete v3.examples;
    writeFileSync(join(d, "schema", "session-state", "4.0.json"), JSON.stringify(v3, null, 2));
    // one registry line, one step
    replaceOnce(
      join(d, "lib", "versions.mjs"),
      '["1.0", "2.0", "3.0"]',
      '["1.0", "2.0", "3.0", "4.0"]',
    );
    replaceOnce(
      join(d, "lib", "migrate.mjs"),
      'const STEPS = { "2.0": v1ToV2, "3.0": v2ToV3 };',
      'const STEPS = { "2.0": v1ToV2, "3.0": v2ToV3, "4.0": (doc, ctx) => ({ ...repair(doc, ctx), schema_version: "4.0" }) };',
    );
    const sr = await import(pathToFileURL(join(d, "index.mjs")).href);
    assert.equal(sr.CURRENT, "4.0");
    const now = sr.parseNow("2026-03-02T12:00:00Z");
    const wf = sr.loadWorkflow("apex");
    const v3doc = {
      ...sr.templateState(wf, "demo", "2026-03-02T10:00:00Z"),
      schema_version: "3.0",
    };
    const out = sr.migrateDocument(v3doc, { now });
    assert.equal(out.from, "3.0");
    assert.equal(out.document.schema_version, "4.0");
    assert.ok(out.changed);
    // the writers write the new current version, and validate accepts it
    const dir = join(d, "session");
    const res = sr.init({ dir, now, session: "s1", root: d }, "demo");
    assert.equal(res.document.schema_version, "4.0");
    assert.deepEqual(sr.validate(dir, { now, root: d }), []);
    // a 3.0 file is now an old version to migrate
    writeFileSync(
      join(dir, "00-session-state.json"),
      JSON.stringify({ ...v3doc, revision: 1 }, null, 2),
    );
    assert.deepEqual(sr.validate(dir, { now, root: d }), ["SR140"]);
    assert.equal(sr.migrate(dir, { now, root: d }).status, "migrated");
    assert.equal(
      JSON.parse(readFileSync(join(dir, "00-session-state.json"), "utf8")).schema_version,
      "4.0",
    );
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
