#!/bin/sh
# Remakes docs/img/step-view.png, the README's picture of report.html's step view: the
# default suite run, its report.html, and headless Chromium's screenshot of the page
# opened on the first trial with a premature done (#open=TRIAL_ID), its sessions
# unfolded into their steps, the counted ones marked.
#
#   scripts/readme-picture.sh [BIN [RUN_DIR]]
#
# BIN: the loopbench binary (default target/release/loopbench, built if missing).
# RUN_DIR: a finished run of the default suite to picture instead of running it.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/loopbench}
if [ ! -x "$bin" ]; then
    (cd "$root" && cargo build --release --quiet)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=${2:-}
if [ -z "$run" ]; then
    run=$work/run
    # Exit 1 is a verdict (an arm differs), not a failure.
    "$bin" run "$root/suites/seed-replication" --quiet --out "$run" >/dev/null || [ $? -eq 1 ]
fi
"$bin" report "$run" --html >/dev/null || [ $? -eq 1 ]
# The trial of the first session counted as a premature done.
trial=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "premature_claims") c = i; next }
    $c > 0 { print $1; exit }' "$run/sessions.csv")
[ -n "$trial" ] || { echo "no session of $run claimed a feature prematurely" >&2; exit 1; }
# Chromium headless, driven over its DevTools protocol by readme-picture.js, which
# waits for the trial's steps and pictures its block (the size keeps it under 300 KB).
chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$work/profile" --remote-debugging-port=0 about:blank >/dev/null 2>&1 &
browser=$!
for _ in $(seq 100); do
    [ -s "$work/profile/DevToolsActivePort" ] && break
    sleep 0.1
done
port=$(sed -n 1p "$work/profile/DevToolsActivePort")
path=$(sed -n 2p "$work/profile/DevToolsActivePort")
status=0
node --experimental-websocket --no-warnings "$root/scripts/readme-picture.js" \
    "ws://127.0.0.1:$port$path" "file://$run/report.html#open=$trial&metric=premature_done" \
    "$trial" "$root/docs/img/step-view.png" 1000 1100 || status=$?
kill "$browser" 2>/dev/null || true
wait "$browser" 2>/dev/null || true
[ "$status" -eq 0 ] || exit "$status"
echo "docs/img/step-view.png: $trial of $run, $(du -k "$root/docs/img/step-view.png" | cut -f1) KiB"
