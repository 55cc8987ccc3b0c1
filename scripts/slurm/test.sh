#!/usr/bin/env bash
# End-to-end test of scripts/slurm on a one-node Slurm cluster started for the test
# (scripts/slurm/local-cluster.sh, with its state in a temporary directory):
#
#  1. the shipped suite as 3 shards through run.sh, by the command of docs/scale-out.md
#     as written (its second `sh slurm` block, run from a scratch directory laid out
#     like the repository root), gives merged sessions.csv, trials.csv and summary.*
#     byte-identical to a single-process `--jobs 1` run;
#  2. a shard that fails (its loopbench is killed with SIGKILL after its first trial, as
#     a crashed node would) makes run.sh exit 1 naming the shard, and the merge does not
#     run; running run.sh again resumes only that shard, leaves the other shards' files
#     untouched, and merges into the same tables as 1;
#  3. local-cluster.sh stop leaves none of the daemons it started;
#  4. the page's first `sh slurm` block (start, status, stop) runs as written and
#     leaves no daemon either.
#
# The binary under test is target/debug/loopbench (under $CARGO_TARGET_DIR when that is
# set, as .ci/run sets it), built here with `cargo build --locked`; the page's commands find it as target/release/loopbench of the scratch
# directory. Replicates: 2, as on the page.
#
# Skips (exit 0, printing SKIPPED and why) when this machine cannot have a cluster: not
# root, or Slurm not installed and no apt-get, or the install failed. When the packages
# are there but the daemons do not come up, it fails under CI=true (.ci/run sets it) and
# skips otherwise; either way local-cluster.sh says why (with the daemons' logs when one
# of them exited).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$(pwd)"
replicates=2
suite="$repo/suites/seed-replication"
started_at=$SECONDS

say() { echo "slurm test: [$((SECONDS - started_at))s] $*"; }
skip() {
    echo "slurm test: SKIPPED: $*"
    exit 0
}
fail() {
    echo "slurm test: FAILED: $*" >&2
    [ -z "${tmp:-}" ] || echo "slurm test: files kept in $tmp" >&2
    exit 1
}

[ "$(id -u)" -eq 0 ] || skip "needs root to install and run the Slurm daemons"
if ! command -v slurmctld >/dev/null 2>&1 && ! command -v apt-get >/dev/null 2>&1; then
    skip "Slurm is not installed and there is no apt-get to install it"
fi

say "building loopbench"
cargo build --locked --quiet
bin="${CARGO_TARGET_DIR:-$repo/target}/debug/loopbench"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/loopbench-slurm-test.XXXXXX")"
export LOOPBENCH_SLURM_STATE="$tmp/cluster"
export SLURM_CONF="$LOOPBENCH_SLURM_STATE/slurm.conf"
cluster="$repo/scripts/slurm/local-cluster.sh"
run_sh="$repo/scripts/slurm/run.sh"
cluster_up=0
cleanup() {
    local rc=$?
    if [ $cluster_up -eq 1 ]; then
        "$cluster" stop || true
    fi
    if [ $rc -eq 0 ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT

say "starting the cluster (state in $LOOPBENCH_SLURM_STATE)"
set +e
"$cluster" start
rc=$?
set -e
if [ $rc -eq 5 ]; then
    skip "this machine cannot have the cluster (local-cluster.sh start exited 5, see above)"
elif [ $rc -ne 0 ]; then
    cluster_up=1 # stop whatever did start
    if [ "${CI:-}" = true ]; then
        fail "Slurm is installed but the cluster did not come up (local-cluster.sh start exited $rc)"
    fi
    skip "Slurm is installed but the cluster did not come up (exit $rc); under CI=true this fails"
fi
cluster_up=1
pids=()
for name in munged slurmctld slurmd; do
    [ -f "$LOOPBENCH_SLURM_STATE/pids/$name" ] && pids+=("$name:$(cat "$LOOPBENCH_SLURM_STATE/pids/$name")")
done
say "daemons started: ${pids[*]}"

tables=(sessions.csv trials.csv summary.csv summary.json summary.md)
same_tables() { # same_tables DIR: DIR's tables equal the reference's, byte for byte
    local t
    for t in "${tables[@]}"; do
        cmp "$tmp/reference/$t" "$1/$t" || fail "$1/$t differs from the single-process run's"
    done
    say "merged ${tables[*]} are byte-identical to the --jobs 1 run's"
}
finished() {
    grep -Eq '"finished": *"' "$1/manifest.json" 2>/dev/null
}

# The `sh slurm` blocks of docs/scale-out.md, as $tmp/doc-block-1.sh, -2.sh, ...
awk -v dir="$tmp" '
    /^```sh slurm$/ { n++; file = dir "/doc-block-" n ".sh"; printf "" > file; inside = 1; next }
    inside && /^```$/ { inside = 0; next }
    inside { print > file }
' "$repo/docs/scale-out.md"
[ -s "$tmp/doc-block-2.sh" ] || fail "docs/scale-out.md has fewer than two sh slurm blocks"
grep -q "scripts/slurm/run.sh" "$tmp/doc-block-2.sh" || fail "the second sh slurm block of docs/scale-out.md does not run run.sh"
grep -q -- "--replicates $replicates" "$tmp/doc-block-2.sh" || fail "docs/scale-out.md's run.sh command no longer runs $replicates replicates"
# The page's commands run from a repository root; this one has the suites and scripts
# of the checkout and the binary under test where a release build would be.
checkout="$tmp/checkout"
mkdir -p "$checkout/target/release"
ln -s "$repo/suites" "$checkout/suites"
ln -s "$repo/scripts" "$checkout/scripts"
ln -s "$bin" "$checkout/target/release/loopbench"

say "reference: one process, --jobs 1, $replicates replicates"
"$bin" run "$suite" --replicates "$replicates" --jobs 1 --quiet --out "$tmp/reference" >/dev/null 2>"$tmp/reference.log" ||
    fail "the reference run failed: $(tail -n 5 "$tmp/reference.log")"

# 1. Three shards by the page's command, default (deterministic) results root under the
# working directory.
say "1. docs/scale-out.md's run.sh command, as written, in $checkout"
(cd "$checkout" && bash -euo pipefail "$tmp/doc-block-2.sh") |
    tee "$tmp/run1.log" || fail "run.sh failed on a healthy cluster"
root="$checkout/results/slurm/seed-replication-s20260704-r$replicates-n3"
grep -qx "merged run: $root/merged" "$tmp/run1.log" || fail "run.sh did not print the merged run $root/merged"
grep -Eq 'array tasks: [0-9]+_1 [0-9]+_2 [0-9]+_3 ' "$tmp/run1.log" || fail "run.sh did not print the three array tasks"
same_tables "$root/merged"

# 2. Shard 2 fails: a wrapper around loopbench kills its real loopbench with SIGKILL once
# the shard has finished a trial, while the marker file exists.
say "2. shard 2 fails, then a re-run resumes only it"
marker="$tmp/fail-shard-2"
touch "$marker"
flaky="$tmp/flaky-loopbench"
cat >"$flaky" <<EOF
#!/usr/bin/env bash
set -euo pipefail
if [ "\${SLURM_ARRAY_TASK_ID:-}" = 2 ] && [ -e "$marker" ] && [ "\$1" = run ]; then
    out=""
    prev=""
    for a in "\$@"; do [ "\$prev" = --out ] && out="\$a"; prev="\$a"; done
    "$bin" "\$@" &
    pid=\$!
    while [ ! -s "\$out/trials.jsonl" ] && kill -0 "\$pid" 2>/dev/null; do sleep 0.05; done
    kill -KILL "\$pid" 2>/dev/null || true
    wait "\$pid" || true
    echo "flaky-loopbench: killed shard 2's loopbench (pid \$pid) with SIGKILL after its first trial" >&2
    exit 137
fi
exec "$bin" "\$@"
EOF
chmod +x "$flaky"
fail_root="$tmp/fail"
set +e
LOOPBENCH_BIN="$flaky" "$run_sh" "$suite" --shards 3 --replicates "$replicates" --poll 1 \
    --results "$fail_root" 2>&1 | tee "$tmp/run2.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 1 ] || fail "run.sh exited $rc with a failed shard, expected 1"
grep -Eq "^run.sh: shard 2/3 failed \(array task [0-9]+_2, .*\), log: $fail_root/logs/shard-2\.[0-9]+_2\.log$" "$tmp/run2.log" ||
    fail "run.sh did not name the failed shard 2/3 with its array task and log"
if grep -q 'shard [13]/3 failed' "$tmp/run2.log"; then fail "run.sh blamed a shard that did not fail"; fi
[ ! -e "$fail_root/merged" ] || fail "the merge ran although shard 2 failed"
if ! finished "$fail_root/shard-1" || ! finished "$fail_root/shard-3"; then
    fail "shards 1 and 3 should have finished"
fi
! finished "$fail_root/shard-2" || fail "shard 2 should not have finished"
[ -s "$fail_root/shard-2/trials.jsonl" ] || fail "shard 2 should have kept its first trial"
say "run.sh exited 1 and named shard 2/3; no merge; shard 2 kept $(wc -l <"$fail_root/shard-2/trials.jsonl") finished trial(s)"

fingerprint() { # sizes, mtimes (ns) and hashes of every file of shards 1 and 3
    (cd "$fail_root" && find shard-1 shard-3 -type f -printf '%p %s %T@\n' | sort &&
        find shard-1 shard-3 -type f -print0 | sort -z | xargs -0 sha256sum)
}
fingerprint >"$tmp/before"
rm "$marker"
LOOPBENCH_BIN="$flaky" "$run_sh" "$suite" --shards 3 --replicates "$replicates" --poll 1 \
    --results "$fail_root" | tee "$tmp/run3.log" || fail "the re-run failed"
for i in 1 3; do
    grep -q "shard $i/3 finished earlier" "$tmp/run3.log" || fail "the re-run did not skip shard $i/3"
done
grep -Eq 'array tasks: [0-9]+_2 \(array indices 2 of 1-3\)' "$tmp/run3.log" ||
    fail "the re-run did not submit array index 2 alone"
grep -q 'resuming' "$fail_root"/logs/shard-2.*_2.log || fail "shard 2 was not resumed"
fingerprint >"$tmp/after"
diff "$tmp/before" "$tmp/after" || fail "the re-run touched the files of shards 1 or 3"
say "the re-run ran array index 2 only (resumed), shards 1 and 3 untouched"
same_tables "$fail_root/merged"

# 3. Stop: none of the daemons this test started is left.
say "3. stopping the cluster"
cluster_up=0
"$cluster" stop || fail "local-cluster.sh stop failed"
left=()
for entry in "${pids[@]}"; do
    # Only the daemon itself: the kernel hands a pid out again once the counter wraps
    # (pid_max may be 32768, and the tests beside this one start processes by the
    # thousand), and another process under a daemon's old pid is not that daemon.
    [ "$(ps -p "${entry#*:}" -o comm= 2>/dev/null)" = "${entry%%:*}" ] && left+=("$entry")
done
if pgrep -f "$LOOPBENCH_SLURM_STATE" >/dev/null; then
    left+=("$(pgrep -af "$LOOPBENCH_SLURM_STATE" | tr '\n' ';')")
fi
[ ${#left[@]} -eq 0 ] || fail "still running after stop: ${left[*]}"
say "no daemon left"

# 4. The page's first block: start, status and stop, as written.
say "4. docs/scale-out.md's local-cluster.sh commands, as written"
cluster_up=1
(cd "$checkout" && bash -euo pipefail "$tmp/doc-block-1.sh") | tee "$tmp/doc1.log" ||
    fail "docs/scale-out.md's start, status, stop failed"
cluster_up=0
if pgrep -f "$LOOPBENCH_SLURM_STATE" >/dev/null; then
    fail "still running after the page's stop: $(pgrep -af "$LOOPBENCH_SLURM_STATE" | tr '\n' ';')"
fi
say "no daemon left"
say "PASSED in $((SECONDS - started_at))s"
