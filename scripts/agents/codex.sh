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
# (the sandbox may show the agent this file alone): it needs bash, mktemp, tee and the
# loopbench binary, whose `loopbench usage` reads the CLI's output.
set -euo pipefail
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

# run_reporting FORMAT CMD...: runs CMD (stdin is this function's), passes its stdout on
# and keeps a copy, writes $LOOPBENCH_USAGE_FILE from that copy with `loopbench usage
# FORMAT` once CMD has ended, and returns CMD's exit status. The CLI and the commands it
# runs for the agent never see the usage file's path: it is the wrapper's report, and a
# tool that wrote it could claim an outage for the agent. The harness names its own
# binary in $LOOPBENCH_BIN (and makes it readable in the sandbox); without it, loopbench
# on PATH.
run_reporting() {
    local format=$1 capture status=0 bin=${LOOPBENCH_BIN:-loopbench}
    local usage_file=${LOOPBENCH_USAGE_FILE:-}
    unset LOOPBENCH_USAGE_FILE
    shift
    capture=$(mktemp "${TMPDIR:-/tmp}/loopbench-$format.XXXXXX" 2>/dev/null ||
        mktemp "/tmp/loopbench-$format.XXXXXX")
    "$@" | tee "$capture" || status=$?
    if [ -n "$usage_file" ]; then
        "$bin" usage "$format" "$capture" >"$usage_file" ||
            echo "${0##*/}: could not write the usage file with '$bin usage $format'" >&2
    fi
    rm -f "$capture"
    return "$status"
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
with_budget | run_reporting codex codex exec --json --skip-git-repo-check "${sandbox[@]}" \
    "${provider[@]}" "$@" -
