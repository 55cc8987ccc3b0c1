#!/usr/bin/env bash
# loopbench command agent: aider with one message, one loopbench session per call.
#
# Suite snippet (program is relative to the suite directory):
#
#   [agents.aider]
#   driver = "command"
#   program = "../../scripts/agents/aider.sh"
#   args = ["--model", "sonnet"]               # any extra aider flags
#   timeout = "30m"
#
# The prompt arrives on stdin and is handed to `aider --message-file`. aider has no turn
# limit, so the session's budget ($LOOPBENCH_TURNS) is appended to the message. aider
# commits its own edits (one commit per change). The usage file gets turns (one per
# "Tokens:" line aider prints), tokens (aider rounds them: "2.3k") and the session cost.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

message=$(mktemp "${TMPDIR:-/tmp}/loopbench-aider-message.XXXXXX")
trap 'rm -f "$message"' EXIT
with_budget >"$message"
run_reporting aider aider --message-file "$message" --yes-always --no-pretty --no-stream \
    --no-check-update "$@"
