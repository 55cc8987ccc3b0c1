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
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

run_reporting claude claude -p --output-format stream-json --verbose \
    --max-turns "$LOOPBENCH_TURNS" \
    --permission-mode "${LOOPBENCH_CLAUDE_PERMISSION_MODE:-bypassPermissions}" \
    "$@"
