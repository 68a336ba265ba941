// Workflow definitions (spec §8): built-ins discovered from schema/workflows/<id>.yaml (adding
// a workflow is adding its YAML file), or a definition file.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { compileFragment, check, getSchemaDir } from "./schema.mjs";
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

export class WorkflowError extends Error {
  /** @param {string[]} codes @param {string} message */
  constructor(codes, message) {
    super(message);
    this.codes = codes;
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
    throw new WorkflowError(
      ["SR403"],
      `no built-in workflow named ${spec} and no file at that path`,
    );
  }
  const data = readFileSync(path);
  if (data.length > MAX_BYTES)
    throw new WorkflowError(["SR400"], "the workflow file is over 1 MiB");
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    throw new WorkflowError(["SR400"], "the workflow file is not UTF-8");
  }
  let raw;
  try {
    raw = parseYaml(text);
  } catch (err) {
    if (err instanceof YamlError) throw new WorkflowError([err.code], err.message);
    throw err;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new WorkflowError(["SR400"], "a workflow definition is a mapping");
  }
  const errors = check("workflow/1.json", raw, { override: "SR400" });
  if (errors.length)
    throw new WorkflowError(errors, "the definition breaks schema/workflow/1.json");
  const problems = semanticProblems(raw);
  if (problems.length) throw new WorkflowError(["SR400"], problems.join("; "));
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

/** @param {JsonObject} raw a definition that passed schema/workflow/1.json @returns {string[]} */
function semanticProblems(raw) {
  /** @type {string[]} */
  const out = [];
  const keys = new Set();
  const files = new Set(); // deliverables: one step writes each
  for (const s of raw.steps) {
    if (keys.has(s.key)) out.push(`step key ${s.key} is defined twice`);
    keys.add(s.key);
    const ids = (s.checkpoints ?? []).map((/** @type {JsonObject} */ c) => c.id);
    if (new Set(ids).size !== ids.length)
      out.push(`a checkpoint is defined twice in step ${s.key}`);
    const reviewAt = s.review_checkpoint;
    if (reviewAt !== undefined && (!ids.includes(reviewAt) || !s.review_audited))
      out.push(
        `review_checkpoint ${reviewAt} of step ${s.key} is not a checkpoint of a review_audited step`,
      );
    for (const d of s.deliverables ?? []) {
      if (!ids.includes(d.written_at))
        out.push(
          `deliverable ${d.file} of step ${s.key} is written at ${d.written_at}, not a checkpoint`,
        );
      if (!plainRelative(d.file))
        out.push(
          `deliverable ${d.file} of step ${s.key} must be a plain path inside the session directory`,
        );
      else if (files.has(d.file)) out.push(`deliverable ${d.file} is listed twice`);
      files.add(d.file);
    }
    for (const [old, current] of Object.entries(s.legacy_checkpoints ?? {})) {
      if (!ids.includes(current))
        out.push(`legacy checkpoint ${old} maps to ${current}, not a checkpoint`);
    }
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
