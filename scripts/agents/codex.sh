#!/usr/bin/env bash
# loopbench command agent: OpenAI Codex CLI (`codex exec`), one loopbench session per call.
#
# Suite snippet (program is relative to the suite directory):
#
#   [agents.codex]
#   driver = "command"
#   program = "../../scripts/agents/codex.sh"
#   args = ["--model", "gpt-5-codex"]          # any extra `codex exec` flags
#   timeout = "30m"
#
# The prompt arrives on stdin. `codex exec` has no turn limit, so the session's budget
# ($LOOPBENCH_TURNS) is appended to the prompt as one sentence. stdout is Codex's JSONL
# event stream (kept by loopbench per session); the usage file gets tokens summed over
# its turn.completed events and turns = completed items. Codex prints no cost.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${LOOPBENCH_TURNS:?codex.sh runs under loopbench: LOOPBENCH_TURNS is not set}"

capture=$(mktemp "${TMPDIR:-/tmp}/loopbench-codex.XXXXXX")
trap 'rm -f "$capture"' EXIT
status=0
{
    cat
    printf '\n\nYour budget for this session is %s turns; leave notes before it runs out.\n' \
        "$LOOPBENCH_TURNS"
} | codex exec --json --skip-git-repo-check --full-auto "$@" - | tee "$capture" || status=$?
if [ -n "${LOOPBENCH_USAGE_FILE:-}" ]; then
    python3 "$here/usage.py" codex "$capture" >"$LOOPBENCH_USAGE_FILE" ||
        echo "codex.sh: could not write the usage file (is python3 installed?)" >&2
fi
exit "$status"
