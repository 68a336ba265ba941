// lib/held.mjs and lib/archive.mjs: operations relative to a held directory stay in it when
// its path is swapped for a link to a decoy after it was held (node --test; real files in a
// temporary directory, the decoy inside it).

import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { archiveSession } from "../lib/archive.mjs";
import { available, HeldDir } from "../lib/held.mjs";

const dirs = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "sr-held-"));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const skip = available() ? false : "needs /proc/self/fd (Linux), which this platform lacks";

test("a rename and a removal follow the held directory, not its swapped path", { skip }, () => {
  const t = tmp();
  const session = join(t, "session");
  const decoy = join(t, "decoy");
  mkdirSync(join(session, "old"), { recursive: true });
  mkdirSync(join(decoy, "old"), { recursive: true });
  writeFileSync(join(session, "a.json"), "mine");
  writeFileSync(join(decoy, "a.json"), "decoy");
  const h = HeldDir.open(session);
  try {
    // the path now leads to the decoy; the held directory lives on under another name
    renameSync(session, join(t, "moved"));
    symlinkSync(decoy, session);
    const target = h.sub("archive", { create: true });
    h.replace("a.json", "a.json", target);
    target.close();
    h.rmtree("old");
  } finally {
    h.close();
  }
  assert.deepEqual(readdirSync(join(t, "moved")).sort(), ["archive"]);
  assert.deepEqual(readdirSync(join(t, "moved", "archive")), ["a.json"]);
  assert.deepEqual(readdirSync(decoy).sort(), ["a.json", "old"]);
});

test("a link inside a removed tree is removed, its target kept", { skip }, () => {
  const t = tmp();
  mkdirSync(join(t, "s", "tree", "deeper"), { recursive: true });
  mkdirSync(join(t, "decoy"));
  writeFileSync(join(t, "decoy", "keep.txt"), "x");
  symlinkSync(join(t, "decoy"), join(t, "s", "tree", "deeper", "link"));
  const h = HeldDir.open(join(t, "s"));
  h.rmtree("tree");
  h.close();
  assert.equal(existsSync(join(t, "s", "tree")), false);
  assert.deepEqual(readdirSync(join(t, "decoy")), ["keep.txt"]);
});

test("archiving refuses an .archive that is a link, and moves nothing", { skip }, () => {
  const t = tmp();
  const d = join(t, "repo", "agent-output", "demo");
  mkdirSync(d, { recursive: true });
  mkdirSync(join(t, "decoy"));
  writeFileSync(join(d, "00-session-state.json"), "{}");
  symlinkSync(join(t, "decoy"), join(d, ".archive"));
  assert.throws(
    () => archiveSession(d, { now: 0, keep: 5, label: "demo", root: join(t, "repo") }),
    (err) => err.problems?.[0]?.code === "SR105",
  );
  assert.deepEqual(readdirSync(join(t, "decoy")), []);
  assert.ok(existsSync(join(d, "00-session-state.json")));
});
