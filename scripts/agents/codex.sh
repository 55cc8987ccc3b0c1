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
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

with_budget | run_reporting codex codex exec --json --skip-git-repo-check --full-auto "$@" -
