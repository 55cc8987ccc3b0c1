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
#
# Self-contained, so that it works under `sandbox = "bwrap"` wherever the checkout lies
# (the sandbox may show the agent this file alone): it needs bash, mktemp, tee and the
# loopbench binary, whose `loopbench usage` reads the CLI's output.
set -euo pipefail
: "${LOOPBENCH_TURNS:?${0##*/} runs under loopbench: LOOPBENCH_TURNS is not set}"

# with_budget: stdin (the prompt), then one sentence with the session's turn budget, for
# CLIs that have no turn limit of their own.
with_budget() {
    cat
    printf '\n\nYour budget for this session is %s turns; leave notes before it runs out.\n' \
        "$LOOPBENCH_TURNS"
}

# run_reporting FORMAT CMD...: runs CMD (stdin is this function's), passes its stdout on
# and keeps a copy, writes $LOOPBENCH_USAGE_FILE from that copy with `loopbench usage
# FORMAT`, and returns CMD's exit status. The harness names its own binary in
# $LOOPBENCH_BIN (and makes it readable in the sandbox); without it, loopbench on PATH.
run_reporting() {
    local format=$1 capture status=0 bin=${LOOPBENCH_BIN:-loopbench}
    shift
    capture=$(mktemp "${TMPDIR:-/tmp}/loopbench-$format.XXXXXX" 2>/dev/null ||
        mktemp "/tmp/loopbench-$format.XXXXXX")
    "$@" | tee "$capture" || status=$?
    if [ -n "${LOOPBENCH_USAGE_FILE:-}" ]; then
        "$bin" usage "$format" "$capture" >"$LOOPBENCH_USAGE_FILE" ||
            echo "${0##*/}: could not write the usage file with '$bin usage $format'" >&2
    fi
    rm -f "$capture"
    return "$status"
}

message=$(mktemp "${TMPDIR:-/tmp}/loopbench-aider-message.XXXXXX")
trap 'rm -f "$message"' EXIT
with_budget >"$message"
run_reporting aider aider --message-file "$message" --yes-always --no-pretty --no-stream \
    --no-check-update "$@"
