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
# ($LOOPBENCH_TURNS) becomes --max-turns. stdout is Claude's stream-json, straight to the
# harness, which keeps it per session (agents/<trial>/session-N.stdout; `loopbench import
# stream-json` re-scores it later) and reads the session's turns, tokens, cost and any
# API error from its own copy (the `usage` line below names the format). The wrapper keeps
# no copy and writes no usage file: a copy in the sandbox, or a file bound into it, is
# the agent's tools' to rewrite, and an outage they wrote there would drop the session.
# Permissions: bypassPermissions by default (the work directory is a throw-away copy);
# set LOOPBENCH_CLAUDE_PERMISSION_MODE in the agent's env to change it. Claude Code 2.1
# refuses bypassPermissions as root ("cannot be used with root/sudo privileges") unless
# IS_SANDBOX=1 (exactly "1") says it runs in a sandbox, which a throw-away work directory
# (usually under `sandbox = "bwrap"`) is: as root, the wrapper sets it.
# Transcripts go to $HOME/.claude/projects/ (under `model_server`, the trial's own HOME,
# agents/<trial>/home/ in the run directory).
#
# Self-contained, so that it works under `sandbox = "bwrap"` wherever the checkout lies
# (the sandbox may show the agent this file alone): it needs bash and id.
set -euo pipefail
# loopbench: usage claude
# loopbench: sandbox-query
# Asked with LOOPBENCH_SANDBOX_QUERY=1 (by the harness, before a sandboxed run, inside a
# sandbox like the session's: it shows the system and PATH's toolchains, not yet what
# this answer names), this wrapper prints the places its CLI needs shown read-only in
# the sandbox: the node_modules tree the CLI is installed in, and node's install; and
# the API it calls, which an agent with `sandbox_network = true` may reach:
# ANTHROPIC_BASE_URL's host when its environment sets one, else api.anthropic.com:443.
# `readlink -m` names where a link leads even where the sandbox does not show it. It
# runs nothing else.
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
    if cli=$(on_path claude); then
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
    net_line "${ANTHROPIC_BASE_URL:-https://api.anthropic.com}"
    exit 0
fi
: "${LOOPBENCH_TURNS:?${0##*/} runs under loopbench: LOOPBENCH_TURNS is not set}"

if [ "$(id -u)" = 0 ]; then
    export IS_SANDBOX=1
fi
# The usage file is no report of this wrapper's; neither the CLI nor the commands it runs
# for the agent see its path.
unset LOOPBENCH_USAGE_FILE
exec claude -p --output-format stream-json --verbose \
    --max-turns "$LOOPBENCH_TURNS" \
    --permission-mode "${LOOPBENCH_CLAUDE_PERMISSION_MODE:-bypassPermissions}" \
    "$@"
