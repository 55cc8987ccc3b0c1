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
# commits its own edits (one commit per change) unless given --no-auto-commits.
#
# Unattended without --yes-always: aider 0.86 asks "Run shell command?" with an explicit
# yes required, which --yes-always answers No, so under it the model's commands never
# run. Instead aider's stdin is /dev/null: every question takes its default answer, Yes
# for running commands, creating files, editing files not in the chat and adding named
# files to it. Set LOOPBENCH_AIDER_YES_ALWAYS=1 in the agent's env for --yes-always.
#
# aider's stdout goes straight to the harness, which keeps it per session and reads it
# itself (the `usage` line below names the format): the "Tokens: 2.3k sent" lines (rounded)
# and a provider exception aider printed last (litellm.RateLimitError,
# AuthenticationError, ...), which is the session's failure when aider printed it before
# it applied an edit or ran a command (after that, its output holds the agent's
# commands' output, where such a line proves nothing). The exact counts come from aider's
# analytics log (--analytics-log, with --no-analytics: nothing is sent anywhere), one
# message_send event per model call, which the wrapper writes to the usage file after
# aider ended; the harness takes no failure from that file, which the agent's tools can
# write, and the wrapper keeps no copy of the output, which they could rewrite too.
# --no-stream: a streamed answer's usage is dropped by aider 0.86.2,
# which then counts tokens with its own tokenizer (in the dry run 7,899 for the 8,592
# the server reported); unstreamed it records the API's counts. aider's histories
# (.aider.chat.history.md, .aider.input.history) go to $HOME, the trial's own directory
# that the harness keeps with the run, not into the work directory, whose cleanliness the
# harness judges by its own index (a .git/info/exclude entry does not hide a file from
# it); the tag cache .aider.tags.cache.v4/ it leaves in the work directory is removed.
#
# Self-contained, so that it works under `sandbox = "bwrap"` wherever the checkout lies
# (the sandbox may show the agent this file alone): it needs bash, git, mktemp and the
# loopbench binary, whose `loopbench usage aider-analytics` reads the analytics log. The
# harness names its own binary in $LOOPBENCH_BIN (and makes it readable in the sandbox);
# without it, loopbench on PATH.
set -euo pipefail
# loopbench: usage aider
# loopbench: sandbox-query
# Asked with LOOPBENCH_SANDBOX_QUERY=1 (by the harness, before a sandboxed run, inside a
# sandbox like the session's: it shows the system and PATH's toolchains, not yet what
# this answer names), this wrapper prints the places aider needs shown read-only in the
# sandbox: its virtualenv, and the Python installation the virtualenv was made from; and
# the APIs of the two providers it is used with here, which an agent with
# `sandbox_network = true` may reach: Anthropic's (ANTHROPIC_BASE_URL's host, else
# api.anthropic.com:443) and OpenAI's (OPENAI_API_BASE's or OPENAI_BASE_URL's host, else
# api.openai.com:443). A model of another provider needs its host listed in the suite's
# sandbox_network. `readlink -m` names where a link leads even where the sandbox does
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
    if cli=$(on_path aider); then
        venv=$(dirname "$(dirname "$(readlink -m "$cli")")")
        echo "ro $venv"
        home=$(sed -n 's/^home *= *//p' "$venv/pyvenv.cfg" 2>/dev/null | head -n 1 || true)
        [ -n "$home" ] && echo "ro $(dirname "$(readlink -m "$home")")"
    fi
    net_line "${ANTHROPIC_BASE_URL:-https://api.anthropic.com}"
    net_line "${OPENAI_API_BASE:-${OPENAI_BASE_URL:-https://api.openai.com}}"
    exit 0
fi
: "${LOOPBENCH_TURNS:?${0##*/} runs under loopbench: LOOPBENCH_TURNS is not set}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/loopbench-aider.XXXXXX" 2>/dev/null ||
    mktemp -d "/tmp/loopbench-aider.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
{
    cat
    printf '\n\nYour budget for this session is %s turns; leave notes before it runs out.\n' \
        "$LOOPBENCH_TURNS"
} >"$scratch/message"

# Also what a session cut off before its end left behind.
rm -rf .aider.tags.cache.v4
if exclude="$(git rev-parse --git-path info/exclude 2>/dev/null)"; then
    mkdir -p "$(dirname "$exclude")"
    grep -qxF '.aider*' "$exclude" 2>/dev/null || printf '.aider*\n' >>"$exclude"
fi

yes=()
if [ "${LOOPBENCH_AIDER_YES_ALWAYS:-}" = 1 ]; then
    yes=(--yes-always)
fi
# The usage file is the wrapper's report of the exact counts, written once aider has
# ended: neither aider nor the commands it runs for the agent see its path.
usage_file=${LOOPBENCH_USAGE_FILE:-}
unset LOOPBENCH_USAGE_FILE
status=0
# COLUMNS: aider prints to a terminal width, and a provider exception wrapped over two
# lines would lose the end of its reason.
COLUMNS=4096 aider --message-file "$scratch/message" "${yes[@]}" --no-pretty --no-stream --no-check-update \
    --no-analytics --analytics-log "$scratch/analytics.jsonl" \
    --chat-history-file "${HOME:-$scratch}/.aider.chat.history.md" \
    --input-history-file "${HOME:-$scratch}/.aider.input.history" "$@" </dev/null || status=$?
rm -rf .aider.tags.cache.v4
# An aider that wrote no analytics log: the harness reads its rounded "Tokens:" lines.
if [ -n "$usage_file" ] && [ -s "$scratch/analytics.jsonl" ]; then
    bin=${LOOPBENCH_BIN:-loopbench}
    "$bin" usage aider-analytics "$scratch/analytics.jsonl" >"$usage_file" ||
        echo "${0##*/}: could not write the usage file with '$bin usage aider-analytics'" >&2
fi
exit "$status"
