// Workflow definitions (spec §8): built-ins discovered from schema/workflows/<id>.yaml (adding
// a workflow is adding its YAML file), or a definition file.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { pointerJoin, pointerSplit, pyRepr } from "./findings.mjs";
import { firstInvalidUtf8 } from "./jsonread.mjs";
import { compileFragment, explain, getSchemaDir } from "./schema.mjs";
import { CURRENT } from "./versions.mjs";
import { parseYaml, YamlError } from "./yaml.mjs";

/**
 * @typedef {import("./types.js").Workflow} Workflow
 * @typedef {import("./types.js").JsonObject} JsonObject
 */

/** The ids of the built-in workflows: the `*.yaml` files of the schema directory's workflows/.
 * @returns {string[]} */
export function builtins() {
  try {
    return readdirSync(join(getSchemaDir(), "workflows"))
      .filter((n) => n.endsWith(".yaml"))
      .map((n) => n.slice(0, -".yaml".length))
      .sort();
  } catch {
    return [];
  }
}
const MAX_BYTES = 1 << 20;

/** @typedef {{code: string, message: string, file: string, pointer?: string,
 *   line?: number | null, column?: number | null}} WorkflowProblem */

export class WorkflowError extends Error {
  /** @param {string[]} codes @param {string} message
   * @param {WorkflowProblem[]} [diagnostics] each finding in the reference's words and place
   * (core/workflow.py, core/yamlsafe.py): its file, pointer, line and column */
  constructor(codes, message, diagnostics = []) {
    super(message);
    this.codes = codes;
    this.diagnostics = diagnostics.length
      ? diagnostics
      : codes.map((code) => ({ code, message, file: "" }));
  }
}

/** A WorkflowError of findings of one file. @param {string} file
 * @param {Omit<WorkflowProblem, "file">[]} found */
function refused(file, found) {
  const diagnostics = found.map((d) => ({ ...d, file }));
  return new WorkflowError(
    diagnostics.map((d) => d.code),
    diagnostics.map((d) => d.message).join("; "),
    diagnostics,
  );
}

/** Line and column of the node at `path` in YAML `text` as the reference's yaml_position
 * finds them (a mapping member: its key), or nulls: a path through a list has none there.
 * @param {string} text @param {string[]} path @returns {[number | null, number | null]} */
function yamlPosition(text, path) {
  try {
    const lines = new LineCounter();
    const doc = parseDocument(text, { version: "1.2", schema: "core", lineCounter: lines });
    /** @type {any} */
    let node = doc.contents;
    /** @type {number | null} */
    let offset = null;
    for (const part of path) {
      if (isMap(node)) {
        /** @type {any} */
        // only a string key: the reference finds no place for `1:` (its key is the int 1)
        const pair = node.items.find((/** @type {any} */ p) => p.key?.value === part);
        if (!pair) break;
        offset = pair.key.range[0];
        node = pair.value;
      } else if (isSeq(node)) {
        // the reference indexes the list with the pointer's string ("0"): a TypeError, which
        // its yaml_position answers with no place
        return [null, null];
      } else break;
    }
    if (offset === null) return [null, null];
    const at = lines.linePos(offset);
    return [at.line, at.col];
  } catch {
    return [null, null];
  }
}

/** @type {Map<string, Workflow | WorkflowError>} */
const cache = new Map();

/** A built-in workflow by id, or a definition file by path; throws WorkflowError (cached,
 * either way). @param {string} spec @returns {Workflow} */
export function loadWorkflow(spec) {
  if (cache.has(spec)) {
    const hit = /** @type {Workflow | WorkflowError} */ (cache.get(spec));
    if (hit instanceof WorkflowError) throw hit;
    return hit;
  }
  try {
    const wf = load(spec);
    cache.set(spec, wf);
    return wf;
  } catch (err) {
    if (err instanceof WorkflowError) cache.set(spec, err);
    throw err;
  }
}

/** @param {string} spec @returns {Workflow} */
function load(spec) {
  let path = spec;
  if (builtins().includes(spec)) path = join(getSchemaDir(), "workflows", `${spec}.yaml`);
  else if (!existsSync(path) || !statSync(path).isFile()) {
    throw refused(spec, [
      {
        code: "SR403",
        message: `no built-in workflow named ${pyRepr(spec)} and no file at that path (built-ins: ${builtins().join(", ")})`,
      },
    ]);
  }
  const data = readFileSync(path);
  const bad = firstInvalidUtf8(data);
  if (bad >= 0) throw refused(path, [{ code: "SR400", message: `invalid UTF-8 at byte ${bad}` }]);
  if (data.length > MAX_BYTES)
    throw refused(path, [{ code: "SR400", message: `the file is larger than ${MAX_BYTES} bytes` }]);
  const text = new TextDecoder("utf-8").decode(data);
  let raw;
  try {
    raw = parseYaml(text);
  } catch (err) {
    if (err instanceof YamlError)
      throw refused(path, [
        { code: err.code, message: err.message, line: err.line, column: err.column },
      ]);
    throw err;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw refused(path, [{ code: "SR400", message: "a workflow definition is a mapping" }]);
  }
  const errors = explain("workflow/1.json", raw, { override: "SR400" });
  if (errors.length)
    throw refused(
      path,
      errors.map((f) => {
        const [line, column] = yamlPosition(text, pointerSplit(f.pointer ?? ""));
        return { code: "SR400", message: f.message, pointer: f.pointer ?? "", line, column };
      }),
    );
  const problems = semanticProblems(raw);
  if (problems.length)
    throw refused(
      path,
      problems.map((p) => ({ code: "SR400", message: p.message, pointer: pointerJoin(p.at) })),
    );
  return build(raw);
}

/** Whether `path` names a file inside a directory as written: relative, `/`-separated, no
 * empty, `.` or `..` component, no control character (core/workflow.py `_plain_relative`).
 * @param {string} path */
function plainRelative(path) {
  return (
    !path.includes("\\") &&
    !path.includes(":") &&
    path.split("/").every((p) => p !== "" && p !== "." && p !== "..") &&
    [...path].every((c) => c.charCodeAt(0) >= 32 && c !== "\u007f")
  );
}

/** The reference's _semantic_problems (core/workflow.py), in its words and at its pointers.
 * @param {JsonObject} raw a definition that passed schema/workflow/1.json
 * @returns {{message: string, at: (string | number)[]}[]} */
function semanticProblems(raw) {
  /** @type {{message: string, at: (string | number)[]}[]} */
  const out = [];
  const problem = (/** @type {string} */ message, /** @type {(string | number)[]} */ at) =>
    out.push({ message, at });
  const dir = String(raw.session_dir);
  const parts = dir.replace(/\\/g, "/").split("/");
  if (dir.startsWith("/") || dir.startsWith("\\") || dir.includes(":") || parts.includes(".."))
    problem(
      "session_dir must be a relative path inside the repository (no leading `/`, no drive, no `..` component)",
      ["session_dir"],
    );
  const seen = new Set();
  const files = new Set(); // deliverables: one step writes each
  const steps = raw.steps ?? [];
  steps.forEach((/** @type {JsonObject} */ s, /** @type {number} */ i) => {
    if (seen.has(s.key)) problem(`step key ${pyRepr(s.key)} is defined twice`, ["steps", i, "key"]);
    seen.add(s.key);
    /** @type {string[]} */
    const ids = (s.checkpoints ?? []).map((/** @type {JsonObject} */ c) => c.id);
    const dups = [...new Set(ids.filter((x) => ids.indexOf(x) !== ids.lastIndexOf(x)))].sort();
    for (const dup of dups)
      problem(`checkpoint ${pyRepr(dup)} is defined twice in step ${s.key}`, [
        "steps",
        i,
        "checkpoints",
      ]);
    const reviewAt = s.review_checkpoint;
    if (
      reviewAt !== undefined &&
      reviewAt !== null &&
      (!ids.includes(reviewAt) || !s.review_audited)
    )
      problem(
        `review_checkpoint ${pyRepr(reviewAt)} of step ${s.key} is not a checkpoint of a review_audited step`,
        ["steps", i, "review_checkpoint"],
      );
    (s.deliverables ?? []).forEach((/** @type {JsonObject} */ d, /** @type {number} */ j) => {
      const at = ["steps", i, "deliverables", j];
      if (!ids.includes(d.written_at))
        problem(
          `deliverable ${pyRepr(d.file)} of step ${s.key} is written at ${pyRepr(d.written_at)}, which is not a checkpoint of the step`,
          [...at, "written_at"],
        );
      if (!plainRelative(d.file))
        problem(
          `deliverable ${pyRepr(d.file)} of step ${s.key} must be a plain path inside the session directory (relative, \`/\`-separated, no \`.\` or \`..\` component)`,
          [...at, "file"],
        );
      else if (files.has(d.file))
        problem(`deliverable ${pyRepr(d.file)} is listed twice`, [...at, "file"]);
      files.add(d.file);
    });
    for (const [old, current] of Object.entries(s.legacy_checkpoints ?? {}))
      if (!ids.includes(current))
        problem(
          `legacy checkpoint ${pyRepr(old)} maps to ${pyRepr(current)}, which is not a checkpoint of the step`,
          ["steps", i, "legacy_checkpoints", old],
        );
  });
  const keys = new Set(
    (raw.decisions ?? [])
      .filter((/** @type {unknown} */ d) => d && typeof d === "object")
      .map((/** @type {JsonObject} */ d) => d.key),
  );
  steps.forEach((/** @type {JsonObject} */ s, /** @type {number} */ i) => {
    const gate = s.gate && typeof s.gate === "object" && !Array.isArray(s.gate) ? s.gate : {};
    (gate.decisions ?? []).forEach((/** @type {string} */ k, /** @type {number} */ j) => {
      if (!keys.has(k))
        problem(`gate decision ${pyRepr(k)} of step ${s.key} is not a key of \`decisions\``, [
          "steps",
          i,
          "gate",
          "decisions",
          j,
        ]);
    });
  });
  const review = raw.review;
  if (review && typeof review === "object" && !Array.isArray(review)) {
    if (!keys.has(review.tier_decision))
      problem(
        `review.tier_decision ${pyRepr(review.tier_decision)} is not a key of \`decisions\``,
        ["review", "tier_decision"],
      );
    if (!Object.hasOwn(review.passes ?? {}, review.default_tier))
      problem(`review.default_tier ${pyRepr(review.default_tier)} is not a key of review.passes`, [
        "review",
        "default_tier",
      ]);
  }
  return out;
}

/** @param {JsonObject} raw a definition that passed schema/workflow/1.json @returns {Workflow} */
function build(raw) {
  /** @type {import("./types.js").StepDef[]} */
  const steps = raw.steps.map((/** @type {JsonObject} */ s) => ({
    key: s.key,
    name: s.name,
    agents: s.agents,
    reviewed: Boolean(s.review_audited),
    reviewAt: s.review_checkpoint ?? null,
    optional: Boolean(s.optional),
    checkpoints: (s.checkpoints ?? []).map((/** @type {JsonObject} */ c) => c.id),
    after: Object.fromEntries(
      (s.checkpoints ?? []).map((/** @type {JsonObject} */ c) => [c.id, c.after ?? null]),
    ),
    legacy: s.legacy_checkpoints ?? {},
    deliverables: (s.deliverables ?? []).map((/** @type {JsonObject} */ d) => ({
      file: d.file,
      writtenAt: d.written_at,
    })),
    budget: s.budget
      ? { max: s.budget.max_startup_files, files: s.budget.startup_files ?? [] }
      : null,
    gate: s.gate ?? null,
  }));
  /** @type {Omit<Workflow, "fragment">} */
  const base = {
    id: raw.id,
    sessionDir: typeof raw.session_dir === "string" ? raw.session_dir : "agent-output/{project}",
    freeSteps: Boolean(raw.free_steps),
    adoptsUnnamed: Boolean(raw.adopts_unnamed_states),
    review: raw.review ?? null,
    steps,
    stepKeys: steps.map((s) => s.key),
    decisions: raw.decisions.map((/** @type {JsonObject} */ d) => ({
      key: d.key,
      required: Boolean(d.required),
      enum: d.enum,
      legacyTopLevel: Boolean(d.legacy_top_level),
    })),
    fields: raw.fields.map((/** @type {JsonObject} */ f) => ({
      name: f.name,
      required: Boolean(f.required),
      schema: f.schema ?? {},
      mirrors: f.mirrors_decision ?? null,
    })),
    step(key) {
      return steps.find((s) => s.key === key) ?? null;
    },
  };
  /** @type {Workflow} */
  const wf = Object.assign(base, { fragment: compileFragment(fragmentSchema(base)) });
  return wf;
}

/** The JSON Schema of a state's workflow-specific parts: its fields and decisions.
 * @param {Pick<Workflow, "fields" | "decisions">} wf */
function fragmentSchema(wf) {
  /** @type {Record<string, object>} */
  const properties = {};
  for (const f of wf.fields) properties[f.name] = f.schema;
  /** @type {Record<string, object>} */
  const dprops = {};
  for (const d of wf.decisions) dprops[d.key] = d.enum !== undefined ? { enum: d.enum } : {};
  properties.decisions = {
    type: "object",
    properties: dprops,
    required: wf.decisions.filter((d) => d.required).map((d) => d.key),
  };
  return {
    type: "object",
    properties,
    required: wf.fields.filter((f) => f.required).map((f) => f.name),
  };
}

/** A fresh current-version state for this workflow, every step pending (spec §5).
 * @param {Workflow} wf @param {string} project @param {string} now
 * @returns {import("./types.js").StateDocument} */
export function templateState(wf, project, now) {
  /** @type {Record<string, object>} */
  const steps = {};
  for (const s of wf.steps) {
    steps[s.key] = {
      name: s.name,
      agent: s.agents.length === 1 ? s.agents[0] : "",
      status: "pending",
      sub_step: null,
      started: null,
      completed: null,
      artifacts: [],
      context_files_used: [],
    };
  }
  /** @type {Record<string, string>} */
  const decisions = {};
  for (const d of wf.decisions) if (d.required) decisions[d.key] = "";
  return {
    schema_version: CURRENT,
    project,
    workflow: wf.id,
    revision: 0,
    updated: now,
    current_step: 0,
    decisions,
    open_findings: [],
    steps,
  };
}
