#!/usr/bin/env bash
# An agent's whole life cycle with session-resume, in a throw-away repository:
# init, a session, step 1 with checkpoints, a decision, a one-write transition to step 2,
# a checkpoint, then a simulated crash (the agent's process is SIGKILLed), and `resume`
# telling the next agent where to continue and what it need not re-read.
#
#   bash examples/lifecycle.sh [WORKDIR]        (needs `session-resume` on PATH)
set -euo pipefail
work="${1:-$(mktemp -d)}"
mkdir -p "$work" && cd "$work" && git init -q . 2>/dev/null || mkdir -p .git
sr() { echo "\$ session-resume $*" >&2; session-resume "$@"; }
dir=agent-output/demo-shop

sleep 600 >/dev/null 2>&1 &    # stands in for the agent's long-lived process
agent=$!
SESSION_RESUME_SESSION=$(sr session start --project demo-shop --owner demo-agent --pid "$agent" \
  --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')
export SESSION_RESUME_SESSION
sr init demo-shop --workflow apex

# write moment 1: step start; 2: checkpoints (with artifacts and the context loaded)
sr start 1 --project demo-shop
echo "# Requirements" > "$dir/01-requirements.md"
sr checkpoint 1 phase_1_discovery --project demo-shop --context-file "$dir/00-session-state.json"
sr checkpoint 1 phase_5_artifact --project demo-shop --artifact "$dir/01-requirements.md"
# write moment 4: a decision; 5: a review finding
sr decide region swedencentral --project demo-shop
sr finding add "No RTO stated for the order database" --project demo-shop
# write moment 3 + start of the next step, in ONE atomic write
sr transition --complete 1 --start 2 --decision compliance=GDPR --project demo-shop
sr checkpoint 2 phase_1_prereqs --project demo-shop \
  --context-file "$dir/00-session-state.json" --context-file "$dir/01-requirements.md"
echo "# Architecture (draft, WAF half done)" > "$dir/02-architecture-assessment.md"
sr checkpoint 2 phase_2_waf --project demo-shop --artifact "$dir/02-architecture-assessment.md"

echo "--- simulated crash: the agent's stand-in process (sleep 600, pid $agent) is killed" \
  "with SIGKILL; no session end is written ---" >&2
kill -9 "$agent"
wait "$agent" 2>/dev/null || true   # reaped here, so the shell reports no "Killed" job
unset SESSION_RESUME_SESSION

echo "--- a new chat starts: what now? ---" >&2
sr validate "$dir"
sr resume "$dir"
sr report "$dir"
