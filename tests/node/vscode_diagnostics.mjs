#!/usr/bin/env node
// VS Code's own JSON language service (npm `vscode-json-languageservice`, the engine of VS Code's
// built-in JSON support) validating documents through JSON Schemas configured the way a user
// configures VS Code: `json.schemas` entries of `fileMatch` patterns and a `url`, with relative
// urls resolved against the workspace folder. Driven by tests/test_vscode.py.
//
// Reads one JSON request on stdin:
//   {"workspace": "/abs/path/of/the/workspace/folder",
//    "schemas": [{"fileMatch": ["00-session-state.json"], "url": "./schema/session-state/3.0.json"}],
//    "documents": [{"path": "/abs/path/agent-output/x/00-session-state.json", "text": "{...}"}]}
// `text` is the document's content (as an editor buffer: the file need not exist); without it
// the file at `path` is read; `hovers` (optional) lists {line, character} positions to hover,
// `completions` (optional) positions to complete at. The service is given VS Code's client
// capabilities (ClientCapabilities.LATEST: Markdown in hovers and completion documentation).
// Prints one JSON object on stdout:
//   {"version": "<language service version>",
//    "documents": [{"path", "uri", "schemas": [<schema uris applied>],
//                   "diagnostics": [{"message", "severity", "code", "source",
//                                    "range": {"start": {"line", "character"}, "end": {...}}}],
//                   "hovers": [{"text", "range"} | null],
//                   "completions": [[{"label", "kind", "insertText", "insertTextFormat",
//                                     "documentation", "documentationKind"}]]}],
//    "schema_reads": [<schema URIs read>]}
// Lines and characters are 0-based (LSP). Schemas are only read from file: URIs, never fetched.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import jsonLanguageService from "vscode-json-languageservice";
import { TextDocument } from "vscode-languageserver-textdocument";

const require = createRequire(import.meta.url);
const { ClientCapabilities, getLanguageService } = jsonLanguageService;

function folderUri(dir) {
  const uri = pathToFileURL(dir).toString();
  return uri.endsWith("/") ? uri : uri + "/";
}

function hoverText(contents) {
  if (typeof contents === "string") return contents;
  if (Array.isArray(contents)) return contents.map(hoverText).join("\n\n");
  if (contents && typeof contents.value === "string") return contents.value;
  return "";
}

async function main() {
  const request = JSON.parse(readFileSync(0, "utf8"));
  const workspace = folderUri(request.workspace);
  const schemaReads = [];
  const service = getLanguageService({
    schemaRequestService: async (uri) => {
      if (!uri.startsWith("file:")) {
        throw new Error(`refusing to fetch ${uri}: only file: schemas are used`);
      }
      schemaReads.push(uri);
      return readFileSync(fileURLToPath(uri), "utf8");
    },
    workspaceContext: {
      resolveRelativePath: (relativePath, resource) => new URL(relativePath, resource).toString(),
    },
    clientCapabilities: ClientCapabilities.LATEST,
  });
  // What VS Code's JSON extension does with a folder's `json.schemas` setting: a relative url
  // is resolved against the folder, and the fileMatch patterns apply inside that folder.
  service.configure({
    validate: true,
    allowComments: false,
    schemas: (request.schemas || []).map((s) => ({
      uri: new URL(s.url, workspace).toString(),
      fileMatch: s.fileMatch,
      folderUri: workspace,
    })),
  });
  const out = [];
  for (const d of request.documents) {
    const uri = pathToFileURL(d.path).toString();
    const text = typeof d.text === "string" ? d.text : readFileSync(d.path, "utf8");
    const doc = TextDocument.create(uri, "json", 1, text);
    const jsonDoc = service.parseJSONDocument(doc);
    const diagnostics = await service.doValidation(doc, jsonDoc, {
      comments: "error",
      trailingCommas: "error",
      schemaValidation: "error",
      schemaRequest: "error",
    });
    const status = await service.getLanguageStatus(doc, jsonDoc);
    const hovers = [];
    for (const position of d.hovers || []) {
      const hover = await service.doHover(doc, position, jsonDoc);
      hovers.push(hover === null ? null : { text: hoverText(hover.contents), range: hover.range ?? null });
    }
    const completions = [];
    for (const position of d.completions || []) {
      const list = await service.doComplete(doc, position, jsonDoc);
      completions.push(
        (list ? list.items : []).map((item) => ({
          label: item.label,
          kind: item.kind ?? null,
          insertText: item.insertText ?? null,
          insertTextFormat: item.insertTextFormat ?? null,
          documentation: hoverText(item.documentation ?? ""),
          documentationKind: item.documentation && typeof item.documentation === "object" ? item.documentation.kind : null,
        })),
      );
    }
    out.push({
      path: d.path,
      uri,
      schemas: status.schemas,
      hovers,
      completions,
      diagnostics: diagnostics.map((x) => ({
        message: x.message,
        severity: x.severity,
        code: x.code ?? null,
        source: x.source ?? null,
        range: x.range,
      })),
    });
  }
  const version = require("vscode-json-languageservice/package.json").version;
  process.stdout.write(JSON.stringify({ version, schema_reads: schemaReads, documents: out }) + "\n");
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
