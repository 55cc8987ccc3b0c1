#!/usr/bin/env bash
# The CPU time of each test, children included, for finding what makes CI slow:
#   scripts/test-cpu.sh [NEXTEST ARGS...]   (default: the ci profile, every test)
# Runs cargo-nextest with a target runner that times each test process with GNU time,
# then prints the tests by CPU seconds (user + system), the most first, and the sum.
# A test that waits on a run another test makes (tests/common/shared_run.rs) shows
# little; the one that made it carries its whole cost.
set -euo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
runner="$(mktemp)"
trap 'rm -f "$log" "$runner"' EXIT
cat >"$runner" <<RUNNER
#!/usr/bin/env bash
name=\$(printf '%s\n' "\$@" | grep -v '^-' | tail -1)
exec /usr/bin/time -a -o "$log" -f "%U %S %e \$name" "\$@"
RUNNER
chmod +x "$runner"
[ $# -gt 0 ] || set -- --profile ci --run-ignored all
status=0
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$runner" cargo nextest run "$@" || status=$?
# The runner also times nextest's listing of the tests: those lines name no test.
echo "   CPU-s   wall-s  test"
awk '$4 ~ /::/ { printf "%8.1f %8.1f  %s\n", $1 + $2, $3, $4 }' "$log" | sort -rn | head -n "${TOP:-40}"
awk '$4 ~ /::/ { sum += $1 + $2; n++ } END { printf "%8.1f CPU-s in all, %d tests\n", sum, n }' "$log"
exit "$status"
