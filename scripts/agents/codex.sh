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
# event stream, straight to the harness, which keeps it per session and reads from its
# own copy (the `usage` line below names the format) tokens summed over its
# turn.completed events, turns = completed items, and the error events that end a turn.
# Codex prints no cost. The wrapper keeps no copy and writes no usage file: a copy in the
# sandbox, or a file bound into it, is the agent's tools' to rewrite.
#
# Codex 0.17x has no --full-auto: the wrapper asks for `--sandbox workspace-write`
# (Codex's own sandbox, writable work directory). Under `sandbox = "bwrap"` the harness's
# sandbox already confines it, and Codex's nested one may not start there: set
# LOOPBENCH_CODEX_SANDBOX=none in the agent's env for
# --dangerously-bypass-approvals-and-sandbox, or any mode of `codex exec --sandbox`.
# Under `model_server` (LOOPBENCH_MODEL_URL set) Codex is pointed at the scripted server
# through a provider of its own (`-c model_provider=loopbench`, wire_api "responses");
# Codex reads no OPENAI_BASE_URL. Its config and sessions go to $CODEX_HOME, by default
# $HOME/.codex.
#
# Self-contained, so that it works under `sandbox = "bwrap"` wherever the checkout lies
# (the sandbox may show the agent this file alone): it needs bash and cat.
set -euo pipefail
# loopbench: usage codex
# loopbench: sandbox-query
# Asked with LOOPBENCH_SANDBOX_QUERY=1 (by the harness, before a sandboxed run, inside a
# sandbox like the session's: it shows the system and PATH's toolchains, not yet what
# this answer names), this wrapper prints the places its CLI needs shown read-only in
# the sandbox: the node_modules tree the CLI is installed in, and node's install; and
# the API it calls, which an agent with `sandbox_network = true` may reach: the host of
# the provider it configures (LOOPBENCH_MODEL_URL), else of OPENAI_BASE_URL, else
# api.openai.com:443. `readlink -m` names where a link leads even where the sandbox does
# not show it. It runs nothing else.
if [ -n "${LOOPBENCH_SANDBOX_QUERY:-}" ]; then
    # on_path NAME: the first PATH entry holding NAME, a program or a link (whose target
    # the sandbox may not show, so that `command -v` would pass it over).
    on_path() {
        local dir IFS=:
        for dir in $PATH; do
            if [ -L "$dir/$1" ] || [ -x "$dir/$1" ]; then
                printf '%s\n' "$dir/$1"
                return 0
            fi
        done
        return 1
    }
    # net_line URL: the "net HOST:PORT" line of the API at URL (port 443, or 80 for
    # http://, unless the URL names one).
    net_line() {
        local url=$1 scheme authority host port=
        scheme=${url%%://*}
        authority=${url#*://}
        authority=${authority%%/*}
        authority=${authority%%\?*}
        authority=${authority##*@}
        case "$authority" in
        \[*\]:*) host=${authority%]:*}] port=${authority##*]:} ;;
        \[*\]) host=$authority ;;
        *:*) host=${authority%:*} port=${authority##*:} ;;
        *) host=$authority ;;
        esac
        [ -n "$port" ] || case "$scheme" in http) port=80 ;; *) port=443 ;; esac
        echo "net $host:$port"
    }
    if cli=$(on_path codex); then
        real=$(readlink -m "$cli")
        case "$real" in
        */node_modules/*) echo "ro ${real%%/node_modules/*}/node_modules" ;;
        *) echo "ro ${real%/*}" ;;
        esac
        case "$cli" in
        */node_modules/*) echo "ro ${cli%%/node_modules/*}/node_modules" ;;
        esac
    fi
    if node=$(on_path node); then
        node=$(readlink -m "$node")
        echo "ro ${node%/bin/*}"
    fi
    net_line "${LOOPBENCH_MODEL_URL:-${OPENAI_BASE_URL:-https://api.openai.com}}"
    exit 0
fi
: "${LOOPBENCH_TURNS:?${0##*/} runs under loopbench: LOOPBENCH_TURNS is not set}"

# with_budget: stdin (the prompt), then one sentence with the session's turn budget, for
# CLIs that have no turn limit of their own.
with_budget() {
    cat
    printf '\n\nYour budget for this session is %s turns; leave notes before it runs out.\n' \
        "$LOOPBENCH_TURNS"
}

sandbox=(--sandbox "${LOOPBENCH_CODEX_SANDBOX:-workspace-write}")
if [ "${LOOPBENCH_CODEX_SANDBOX:-}" = none ]; then
    sandbox=(--dangerously-bypass-approvals-and-sandbox)
fi
provider=()
if [ -n "${LOOPBENCH_MODEL_URL:-}" ]; then
    provider=(-c model_provider=loopbench
        -c 'model_providers.loopbench.name="loopbench"'
        -c "model_providers.loopbench.base_url=\"$LOOPBENCH_MODEL_URL\""
        -c 'model_providers.loopbench.wire_api="responses"'
        -c 'model_providers.loopbench.env_key="LOOPBENCH_MODEL_API_KEY"')
fi
# The usage file is no report of this wrapper's; neither the CLI nor the commands it runs
# for the agent see its path.
unset LOOPBENCH_USAGE_FILE
with_budget | codex exec --json --skip-git-repo-check "${sandbox[@]}" \
    "${provider[@]}" "$@" -
