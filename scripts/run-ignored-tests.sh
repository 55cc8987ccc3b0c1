#!/usr/bin/env bash
# Runs every #[ignore]d test (whole-suite runs, simulations, the shipped tasks' checks):
# `cargo test --locked -- --ignored`, but two test binaries at a time, longest first.
# They are few and long, and a run of the harness spends much of its time waiting on
# the processes and namespaces it starts, so a second binary uses time the first leaves
# idle. Each binary's output is printed whole when it ends; the exit status is 1 when
# any binary failed (each is named). Used by .ci/run.
#
#   scripts/run-ignored-tests.sh                        every one, two at a time
#   scripts/run-ignored-tests.sh calibration seed_patterns   only these tests/NAME.rs
#   IGNORED_TEST_LANES=1 scripts/run-ignored-tests.sh   one at a time
set -euo pipefail
cd "$(dirname "$0")/.."
lanes="${IGNORED_TEST_LANES:-2}"

# Measured longest first (CI's log shows each binary's time); the others follow.
longest_first=(sim_ground_truth calibration docs_real_ab sequential_run stratified_sim check_task)

mapfile -t with_ignored < <(grep -l '#\[ignore' tests/*.rs | sed 's#^tests/##; s#\.rs$##' | sort)
if [[ $# -gt 0 ]]; then
    for t in "$@"; do
        [[ " ${with_ignored[*]} " == *" $t "* ]] || { echo "run-ignored-tests: tests/$t.rs has no ignored test" >&2; exit 2; }
    done
    with_ignored=("$@")
fi
order=()
for t in "${longest_first[@]}" "${with_ignored[@]}"; do
    [[ " ${with_ignored[*]} " == *" $t "* && " ${order[*]} " != *" $t "* ]] && order+=("$t")
done

# Unit tests in src/ have none today; should one appear, it runs here first.
if [[ $# -eq 0 ]] && grep -rq '#\[ignore' src; then
    cargo test --locked --lib --bins -- --ignored
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The executables of the integration tests, as cargo built them (no rebuild after
# `cargo test`), one "name path" line each.
cargo test --locked --no-run --message-format=json 2>"$tmp/build.log" | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["test"] and m.get("executable"):
        print(m["target"]["name"], m["executable"])
' >"$tmp/executables" || { cat "$tmp/build.log" >&2; exit 1; }

jobs=()
for t in "${order[@]}"; do
    exe=$(awk -v t="$t" '$1 == t { print $2 }' "$tmp/executables")
    [[ -n "$exe" ]] || { echo "run-ignored-tests: no test executable for tests/$t.rs" >&2; exit 1; }
    jobs+=("$t" "$exe")
done

# One binary: its output to its own log, its status beside it. cargo runs an
# integration test from the package's root, and so does this.
run_one() {
    local name="$1" exe="$2" dir="$3" start=$SECONDS
    "$exe" --ignored >"$dir/$name.log" 2>&1 && echo 0 >"$dir/$name.rc" || echo $? >"$dir/$name.rc"
    {
        echo "== tests/$name.rs --ignored ($((SECONDS - start)) s)"
        cat "$dir/$name.log"
    } >"$dir/$name.out"
    # One binary's output at a time, never interleaved with the other lane's.
    flock "$dir/print.lock" cat "$dir/$name.out"
}
export -f run_one
printf '%s\0' "${jobs[@]}" | xargs -0 -n 2 -P "$lanes" bash -c 'run_one "$1" "$2" "$0"' "$tmp"

failed=()
for t in "${order[@]}"; do
    [[ "$(cat "$tmp/$t.rc")" == 0 ]] || failed+=("tests/$t.rs")
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "run-ignored-tests: failed: ${failed[*]}" >&2
    exit 1
fi
echo "run-ignored-tests: ${#order[@]} test binaries passed their ignored tests"
