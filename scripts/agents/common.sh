# shellcheck shell=bash
# Shared by the agent wrappers in this directory (sourced, not run): the session budget
# as a sentence, and running the CLI with its output captured for the usage file.

: "${LOOPBENCH_TURNS:?${0##*/} runs under loopbench: LOOPBENCH_TURNS is not set}"
agents_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# with_budget: stdin (the prompt), then one sentence with the session's turn budget, for
# CLIs that have no turn limit of their own.
with_budget() {
    cat
    printf '\n\nYour budget for this session is %s turns; leave notes before it runs out.\n' \
        "$LOOPBENCH_TURNS"
}

# run_reporting FORMAT CMD...: runs CMD (stdin is this function's), passes its stdout on
# and keeps a copy, writes $LOOPBENCH_USAGE_FILE from that copy with `usage.py FORMAT`,
# and returns CMD's exit status.
run_reporting() {
    local format=$1 capture status=0
    shift
    capture=$(mktemp "${TMPDIR:-/tmp}/loopbench-$format.XXXXXX")
    "$@" | tee "$capture" || status=$?
    if [ -n "${LOOPBENCH_USAGE_FILE:-}" ]; then
        python3 "$agents_dir/usage.py" "$format" "$capture" >"$LOOPBENCH_USAGE_FILE" ||
            echo "${0##*/}: could not write the usage file (is python3 installed?)" >&2
    fi
    rm -f "$capture"
    return "$status"
}
