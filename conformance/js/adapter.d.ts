// Type declarations of `session-resume/adapter` (adapter.mjs): the conformance adapter, a
// program that speaks NDJSON on standard input and output (docs/conformance.md). It exports
// nothing; importing it starts the adapter on this process's standard input.

export {};
