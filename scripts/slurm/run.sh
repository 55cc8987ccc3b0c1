#!/usr/bin/env bash
# Runs a suite as a Slurm job array, one loopbench shard per array task, then merges the
# shards in a dependent job, waits for both and prints where the merged run is.
#
#   scripts/slurm/run.sh SUITE --shards N [--results DIR] [--replicates R] [--seed S]
#                        [--cpus C] [--poll SECONDS]
#
#   --shards N       number of shards (array tasks 1..N; shard I/N is task I)
#   --results DIR    results root [default: results/slurm/<suite>-s<seed>-r<replicates>-n<N>];
#                    must be on a file system every node sees
#   --replicates R   replicates per (arm, task) [default: the suite's]
#   --seed S         suite seed [default: the suite's]
#   --cpus C         CPUs per array task, = trials at once in a shard [default: 1]
#   --poll SECONDS   how often squeue is asked [default: 2]
#
# Layout: DIR/shard-I (one run per shard), DIR/merged (the merged run), DIR/logs/
# (shard-I.<job>_<I>.log, merge.<job>.log). The default DIR depends only on the
# arguments, so running the same command again finds the earlier shards: shards whose
# manifest.json records an end time are skipped, only the others are submitted (a shard
# that had started is resumed, finished trials kept), then the merge runs.
#
# The binary the jobs run is $LOOPBENCH_BIN when set, else `loopbench` on PATH, else this
# checkout's target/release/loopbench or target/debug/loopbench (the path is printed). sbatch
# reads its usual environment (SBATCH_PARTITION, SBATCH_TIMELIMIT, SBATCH_ACCOUNT, ...).
#
# Exit codes: 0 merged; 1 a shard or the merge failed (named on stderr, with its log;
# run the same command again to resume); 2 bad arguments; 3 interrupted (the jobs keep
# running in Slurm); 4 Slurm could not be used (sbatch or squeue failing).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"

usage() {
    sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
}

bad() {
    echo "run.sh: $*" >&2
    echo "usage: scripts/slurm/run.sh SUITE --shards N [--results DIR] [--replicates R] [--seed S] [--cpus C] [--poll SECONDS] (--help for more)" >&2
    exit 2
}

say() { echo "run.sh: [$(date -u +%H:%M:%S)] $*"; }

positive() { # positive NAME VALUE
    case "$2" in
    '' | *[!0-9]* | 0*) bad "$1 must be a positive integer, got '$2'" ;;
    esac
}

suite="" shards="" results="" replicates="" seed="" cpus=1 poll=2
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help)
        usage
        exit 0
        ;;
    --shards | --results | --replicates | --seed | --cpus | --poll)
        [ $# -ge 2 ] || bad "$1 needs a value"
        case "$1" in
        --shards) shards="$2" ;;
        --results) results="$2" ;;
        --replicates) replicates="$2" ;;
        --seed) seed="$2" ;;
        --cpus) cpus="$2" ;;
        --poll) poll="$2" ;;
        esac
        shift 2
        ;;
    -*) bad "unknown option '$1'" ;;
    *)
        [ -z "$suite" ] || bad "one suite only (got '$suite' and '$1')"
        suite="$1"
        shift
        ;;
    esac
done
[ -n "$suite" ] || bad "name the suite directory"
[ -n "$shards" ] || bad "--shards N is required"
positive --shards "$shards"
positive --cpus "$cpus"
positive --poll "$poll"
[ -z "$replicates" ] || positive --replicates "$replicates"
case "$seed" in
*[!0-9]*) bad "--seed must be a non-negative integer, got '$seed'" ;;
esac
[ -f "$suite/suite.toml" ] || bad "suite '$suite' not found: expected a directory holding suite.toml"

# The binary: $LOOPBENCH_BIN, else `loopbench` on PATH, else this checkout's own build
# (release before debug), so that the script works from a fresh `cargo build`.
repo="$(cd "$here/../.." && pwd)"
bin="${LOOPBENCH_BIN:-}"
if [ -z "$bin" ]; then
    for candidate in loopbench "$repo/target/release/loopbench" "$repo/target/debug/loopbench"; do
        if command -v "$candidate" >/dev/null 2>&1; then
            bin="$candidate"
            break
        fi
    done
    [ -n "$bin" ] || bad "no loopbench binary: set LOOPBENCH_BIN, put loopbench on PATH, or cargo build --release"
fi
bin_path="$(command -v "$bin" 2>/dev/null)" ||
    bad "loopbench binary '$bin' not found (set LOOPBENCH_BIN or put loopbench on PATH)"
case "$bin_path" in
/*) ;;
*) bin_path="$(cd "$(dirname "$bin_path")" && pwd)/$(basename "$bin_path")" ;;
esac
for tool in sbatch squeue scontrol scancel; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "run.sh: '$tool' not found: this needs a Slurm cluster (scripts/slurm/local-cluster.sh start makes one here)" >&2
        exit 4
    }
done

# The suite must be valid before anything is submitted; its name, seed and replicates
# name the results root.
validated="$("$bin_path" validate "$suite")" || exit 2
suite_abs="$(cd "$suite" && pwd)"
name="$(sed -n "1s/^suite '\(.*\)' is valid.*/\1/p" <<<"$validated")"
[ -n "$name" ] || name="$(basename "$suite_abs")"
if [ -z "$replicates" ]; then
    replicates="$(sed -n '1s/.* x \([0-9][0-9]*\) replicates.*/\1/p' <<<"$validated")"
    [ -n "$replicates" ] || bad "cannot read the replicates of '$suite'; give --replicates"
fi
if [ -z "$seed" ]; then
    # The top-level `seed = N` (before the first [table]) of the validated suite.toml.
    seed="$(awk '/^[ \t]*\[/ { exit } /^[ \t]*seed[ \t]*=/ { sub(/^[^=]*=[ \t]*/, ""); sub(/[ \t]*#.*/, ""); gsub(/_/, ""); print; exit }' "$suite/suite.toml")"
    case "$seed" in
    '' | *[!0-9]*) bad "cannot read the seed of '$suite/suite.toml'; give --seed" ;;
    esac
fi
results="${results:-results/slurm/$name-s$seed-r$replicates-n$shards}"
mkdir -p "$results/logs"
results="$(cd "$results" && pwd)"

finished() { # finished DIR: the run in DIR recorded its end time
    [ -f "$1/manifest.json" ] && grep -Eq '"finished": *"' "$1/manifest.json"
}

# Two drivers on one root would run a shard twice at once; refuse.
tag="loopbench:$results"
active="$(squeue -h -o '%i %k' 2>/dev/null | awk -v tag="$tag" '$2 == tag { printf "%s%s", sep, $1; sep = " " }')" || true
if [ -n "$active" ]; then
    echo "run.sh: jobs $active of $results are still queued or running; wait for them or scancel them" >&2
    exit 2
fi

say "suite $name (seed $seed, $replicates replicates) as $shards shards into $results, with $bin_path"
todo=()
for i in $(seq 1 "$shards"); do
    dir="$results/shard-$i"
    if finished "$dir"; then
        say "shard $i/$shards finished earlier ($dir); skipped"
    elif [ -f "$dir/manifest.json" ]; then
        say "shard $i/$shards did not finish; it will be resumed"
        todo+=("$i")
    else
        todo+=("$i")
    fi
done

merged="$results/merged"
if [ ${#todo[@]} -eq 0 ] && finished "$merged"; then
    say "every shard and the merge finished earlier"
    echo "merged run: $merged"
    exit 0
fi

submit() { # submit SBATCH_ARGS...: prints the job id
    local out
    out="$(sbatch --parsable "$@")" || {
        echo "run.sh: sbatch failed: sbatch $*" >&2
        exit 4
    }
    echo "${out%%;*}"
}

array_job=""
merge_job=""
on_interrupt() {
    echo "run.sh: interrupted; the jobs keep running in Slurm (array job ${array_job:-none}, merge job ${merge_job:-none}); scancel them to stop, or run the same command again once they ended" >&2
    exit 3
}
trap on_interrupt INT TERM

common=(--export="ALL,LOOPBENCH_BIN=$bin_path" --comment="$tag")
if [ ${#todo[@]} -gt 0 ]; then
    list="$(
        IFS=,
        echo "${todo[*]}"
    )"
    array_job="$(submit "${common[@]}" --array="$list" --cpus-per-task="$cpus" \
        --job-name="loopbench-$name" --output="$results/logs/shard-%a.%A_%a.log" \
        "$here/shard.sbatch" "$suite_abs" "$results" "$shards" \
        --replicates "$replicates" --seed "$seed")"
    tasks=""
    for i in "${todo[@]}"; do tasks+=" ${array_job}_$i"; done
    say "submitted array job $array_job, array tasks:$tasks (array indices $list of 1-$shards)"
    merge_job="$(submit "${common[@]}" --dependency="afterok:$array_job" --kill-on-invalid-dep=yes \
        --job-name="loopbench-$name-merge" --output="$results/logs/merge.%j.log" \
        "$here/merge.sbatch" "$results" "$shards")"
    say "submitted merge job $merge_job (runs after array job $array_job succeeds)"
else
    merge_job="$(submit "${common[@]}" --job-name="loopbench-$name-merge" \
        --output="$results/logs/merge.%j.log" "$here/merge.sbatch" "$results" "$shards")"
    say "every shard finished earlier; submitted merge job $merge_job"
fi

# Job states from squeue, printed as they change. A job that squeue no longer lists
# (purged after MinJobAge) counts as ended; the files decide whether it succeeded.
declare -A state
terminal() {
    case "$1" in
    PENDING | RUNNING | COMPLETING | CONFIGURING | SUSPENDED | REQUEUED | REQUEUE_FED | \
        REQUEUE_HOLD | RESIZING | SIGNALING | STAGE_OUT | STOPPED | RESV_DEL_HOLD | SPECIAL_EXIT) return 1 ;;
    esac
    return 0
}
label() { # label JOB_ID: which shard (or the merge) a job id is
    case "$1" in
    "${array_job}_"*) echo "shard ${1#"${array_job}"_}/$shards" ;;
    "$merge_job") echo "merge" ;;
    *) echo "job" ;;
    esac
}
misses=0
wait_for() { # wait_for JOB: polls until every task of JOB ended
    local job="$1" lines id st busy
    while :; do
        if ! lines="$(squeue -h -r -t all -j "$job" -o '%i %T' 2>/dev/null)"; then
            # squeue fails for a job id it no longer knows, and when the controller is
            # briefly unreachable; give it a minute.
            misses=$((misses + 1))
            if [ $misses -gt $((60 / poll + 1)) ]; then
                return 0
            fi
            sleep "$poll"
            continue
        fi
        misses=0
        busy=0
        while read -r id st; do
            [ -n "$id" ] || continue
            if [ "${state[$id]:-}" != "$st" ]; then
                state[$id]="$st"
                say "job $id ($(label "$id")): $st"
            fi
            terminal "$st" || busy=1
        done <<<"$lines"
        [ $busy -eq 1 ] || return 0
        sleep "$poll"
    done
}

failed=()
if [ -n "$array_job" ]; then
    wait_for "$array_job"
    for i in "${todo[@]}"; do
        task="${array_job}_$i"
        log="$results/logs/shard-$i.$task.log"
        if finished "$results/shard-$i"; then
            continue
        fi
        exit_code="$(scontrol show job "$task" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' | head -n 1)" || true
        echo "run.sh: shard $i/$shards failed (array task $task, ${state[$task]:-state unknown}${exit_code:+, exit $exit_code}), log: $log" >&2
        failed+=("$i")
    done
fi
if [ ${#failed[@]} -gt 0 ]; then
    scancel "$merge_job" 2>/dev/null || true
    echo "run.sh: merge job $merge_job cancelled: ${#failed[@]} of $shards shards failed; the shards that finished are kept" >&2
    echo "run.sh: fix the cause and run the same command again to resume shard(s) $(
        IFS=,
        echo "${failed[*]}"
    )" >&2
    exit 1
fi

wait_for "$merge_job"
if ! finished "$merged"; then
    echo "run.sh: the merge failed (job $merge_job, ${state[$merge_job]:-state unknown}), log: $results/logs/merge.$merge_job.log" >&2
    exit 1
fi
say "done"
echo "merged run: $merged"
