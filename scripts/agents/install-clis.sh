#!/usr/bin/env bash
# Installs the pinned agent CLIs that tests/real_cli.rs runs against the scripted model
# server (`loopbench mock-model`), into $LOOPBENCH_CLI_DIR (default
# ~/.cache/loopbench-clis), where the test looks for them:
#
#   npm/node_modules/.bin/claude   @anthropic-ai/claude-code (ships its native binary)
#   npm/node_modules/.bin/codex    @openai/codex
#   aider/bin/aider                aider-chat, in a virtualenv of its own
#
# A CLI already installed at its pinned version is left alone. Each CLI is installed on
# its own: one that fails is named and the others still go in. Exit status: 0 when all
# are there, 1 when any failed (.ci/run fails on that under CI=true; the test then
# skips only the missing CLI elsewhere).
#
# Usage: scripts/agents/install-clis.sh
set -uo pipefail

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
AIDER_VERSION=0.86.2

dir=${LOOPBENCH_CLI_DIR:-$HOME/.cache/loopbench-clis}
mkdir -p "$dir" || exit 1
failed=()

# npm_version PACKAGE: the version installed under $dir/npm, or nothing.
npm_version() {
    sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
        "$dir/npm/node_modules/$1/package.json" 2>/dev/null | head -n 1
}

npm_install() {
    local package=$1 version=$2 name=$3
    if [ "$(npm_version "$package")" = "$version" ] && [ -x "$dir/npm/node_modules/.bin/$name" ]; then
        echo "install-clis: $package $version already installed"
        return
    fi
    echo "install-clis: npm install $package@$version"
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-clis: npm is not installed: $package left out" >&2
        failed+=("$package")
        return
    fi
    mkdir -p "$dir/npm"
    if ! npm install --prefix "$dir/npm" --save-exact --no-audit --no-fund --loglevel=error \
        "$package@$version" || ! [ -x "$dir/npm/node_modules/.bin/$name" ]; then
        echo "install-clis: npm could not install $package@$version" >&2
        failed+=("$package")
    fi
}

aider_install() {
    local venv=$dir/aider
    if [ -x "$venv/bin/aider" ] &&
        "$venv/bin/python" -m pip show aider-chat 2>/dev/null | grep -qx "Version: $AIDER_VERSION"; then
        echo "install-clis: aider-chat $AIDER_VERSION already installed"
        return
    fi
    echo "install-clis: pip install aider-chat==$AIDER_VERSION"
    if ! { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } ||
        ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            "aider-chat==$AIDER_VERSION" || ! [ -x "$venv/bin/aider" ]; then
        echo "install-clis: pip could not install aider-chat==$AIDER_VERSION" >&2
        failed+=(aider-chat)
    fi
}

npm_install @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" claude
npm_install @openai/codex "$CODEX_VERSION" codex
aider_install

if [ ${#failed[@]} -gt 0 ]; then
    echo "install-clis: not installed: ${failed[*]}" >&2
    exit 1
fi
echo "install-clis: all pinned CLIs are in $dir"
