#!/usr/bin/env bash
# loopbench command agent: Claude Code in print mode, one loopbench session per call.
#
# Suite snippet (program is relative to the suite directory):
#
#   [agents.claude]
#   driver = "command"
#   program = "../../scripts/agents/claude.sh"
#   args = ["--model", "claude-sonnet-4-5"]    # any extra claude flags
#   timeout = "30m"
#
# The prompt arrives on stdin and goes to `claude -p` unchanged. The session's turn budget
# ($LOOPBENCH_TURNS) becomes --max-turns. stdout is Claude's stream-json, which loopbench
# keeps per session (agents/<trial>/session-N.stdout; `loopbench import stream-json`
# re-scores it later). The usage file gets turns, tokens and cost from its result line.
# Permissions: bypassPermissions by default (the work directory is a throw-away copy);
# set LOOPBENCH_CLAUDE_PERMISSION_MODE in the agent's env to change it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${LOOPBENCH_TURNS:?claude.sh runs under loopbench: LOOPBENCH_TURNS is not set}"

capture=$(mktemp "${TMPDIR:-/tmp}/loopbench-claude.XXXXXX")
trap 'rm -f "$capture"' EXIT
status=0
claude -p --output-format stream-json --verbose \
    --max-turns "$LOOPBENCH_TURNS" \
    --permission-mode "${LOOPBENCH_CLAUDE_PERMISSION_MODE:-bypassPermissions}" \
    "$@" | tee "$capture" || status=$?
if [ -n "${LOOPBENCH_USAGE_FILE:-}" ]; then
    python3 "$here/usage.py" claude "$capture" >"$LOOPBENCH_USAGE_FILE" ||
        echo "claude.sh: could not write the usage file (is python3 installed?)" >&2
fi
exit "$status"
