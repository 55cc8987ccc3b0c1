#!/bin/sh
# Weekly report of every loopbench run under a results root: per metric and arm, the
# rate of each ISO week with its Wilson interval, week-over-week regressions flagged by
# the rule of `loopbench compare`, as weekly.csv, weekly.md and plots/<metric>.svg.
#
# Usage: scripts/weekly-report.sh [RESULTS_ROOT [OUT_DIR [SINCE]]]
#   RESULTS_ROOT  searched recursively for manifest.json      (default: results)
#   OUT_DIR       where the report goes                        (default: RESULTS_ROOT/weekly)
#   SINCE         only runs started within this span before now (default: 12weeks)
# Set LOOPBENCH to the binary when it is not on PATH.
#
# Cron entry (every Monday at 06:00, the week just finished included):
#   0 6 * * 1  cd /srv/loopbench && scripts/weekly-report.sh /srv/loopbench/results >>/var/log/loopbench-weekly.log 2>&1
set -eu

root="${1:-results}"
out="${2:-$root/weekly}"
since="${3:-12weeks}"
loopbench="${LOOPBENCH:-loopbench}"

echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) weekly report of $root since $since into $out"
"$loopbench" weekly "$root" --since "$since" --out "$out" >/dev/null
