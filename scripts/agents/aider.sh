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
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${LOOPBENCH_TURNS:?aider.sh runs under loopbench: LOOPBENCH_TURNS is not set}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/loopbench-aider.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
{
    cat
    printf '\n\nYour budget for this session is %s turns; leave notes before it runs out.\n' \
        "$LOOPBENCH_TURNS"
} >"$scratch/message.md"
status=0
aider --message-file "$scratch/message.md" --yes-always --no-pretty --no-stream \
    --no-check-update "$@" | tee "$scratch/capture" || status=$?
if [ -n "${LOOPBENCH_USAGE_FILE:-}" ]; then
    python3 "$here/usage.py" aider "$scratch/capture" >"$LOOPBENCH_USAGE_FILE" ||
        echo "aider.sh: could not write the usage file (is python3 installed?)" >&2
fi
exit "$status"
