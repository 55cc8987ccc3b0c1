#!/usr/bin/env bash
# Benchmarks of loopbench, one section per concern. Usage:
#   scripts/bench.sh run [SUITE]       time the default suite (release) at --jobs 1 and
#                                      --jobs 2, and a bare shell loop doing the same
#                                      per-session work; prints harness/bare ratios
#   scripts/bench.sh report [ROWS [BIN]]
#                                      time `loopbench report` on a generated sessions.csv
#                                      of ROWS rows (default 1000000), release build; with
#                                      BIN (an older build), times it on the same file too
#                                      and checks that summary.csv is identical
#   scripts/bench.sh replay [TRACES]   replay a directory of TRACES generated traces
#                                      (default 500) at --jobs 1 and --jobs 2; prints the
#                                      speed-up and checks that the tables are identical
#   scripts/bench.sh html [TRIALS]     size of report.html and the time headless Chromium
#                                      takes to load it and run its script, for the
#                                      default run and a generated run of TRIALS trials
#                                      (default 10000)
#   scripts/bench.sh weekly [RUNS [BIN]]
#                                      time `loopbench weekly` over RUNS generated runs
#                                      (default 200) of 12,000 session rows each, two a
#                                      day (200 runs span 15 ISO weeks), release build;
#                                      with BIN (an older build), times it on the same
#                                      runs too and checks that weekly.csv is identical
#   scripts/bench.sh sandbox [SUITE]   in one invocation: SUITE's tasks (default: the
#                                      default suite's) done by a command agent through the
#                                      agent sandbox against without it (GOLD_REPLICATES,
#                                      default 6; five runs of each, medians); SUITE itself
#                                      with its checks under bubblewrap against on the host
#                                      (the target: <= 1.3); the real-CLI dry run
#                                      with sandbox = "none" against "bwrap" (when the CLIs
#                                      are installed). Prints each ratio and checks that the
#                                      tables agree
#   scripts/bench.sh network [BIN]    in one invocation, the per-session cost of an agent's
#                                      network: a sandboxed command agent that fetches a page
#                                      from a service on the host's 127.0.0.1 each session,
#                                      through its own network namespace, the relay and the
#                                      harness's proxy (this build), against the same suite
#                                      under BIN, a build whose sandbox shared the host's
#                                      network (--share-net; default: the commit before
#                                      src/sandbox/net/, built into the same target
#                                      directory), and against this build without network
#                                      (NET_REPLICATES, default 4, of 6 sessions; five runs
#                                      of each, medians; release)
#   scripts/bench.sh bounds BASE_BIN   the cost of the bounds on a command agent's places
#                                      (as root a tmpfs of their own per trial; after each
#                                      session the room left is read and HOME copied to
#                                      the run directory): the default suite's tasks done
#                                      by the gold command agent (GOLD_REPLICATES, default
#                                      6, --jobs 1), with an empty HOME and with a HOME
#                                      growing by 1 MiB a session (a CLI's transcripts),
#                                      unsandboxed and sandboxed; one run each with this
#                                      checkout's release build (or $BIN) and with
#                                      BASE_BIN, a release build of an earlier commit.
#                                      Prints the cost per session and checks that
#                                      sessions.csv is identical
#   scripts/bench.sh memory [SIZES]    peak memory against the size of a run: the peak RSS
#                                      of `run` of the default suite at 10 and at 40
#                                      replicates and their ratio; then from one real
#                                      run of the default suite (arms json and markdown),
#                                      runs of about SIZES trials each (default 10 100
#                                      1000 10000) are made by copying its records; prints
#                                      the peak RSS of `resume` of the finished run (its
#                                      end: the records pruned, the tables, summary and
#                                      report.html rewritten) and of `report --html`,
#                                      release build (or $BIN)
#   scripts/bench.sh trajectories BASE_BIN [TRIALS...]
#                                      what recording every session's trajectory costs:
#                                      the default suite (--jobs 1) with this checkout's
#                                      release build (or $BIN) against BASE_BIN, a release
#                                      build of a commit before trajectories (the time
#                                      added, which must stay under 5%, and sessions.csv
#                                      identical); then the peak RSS of real runs of about
#                                      TRIALS trials each (default 1000 10000; the default
#                                      suite's json arm, both tasks), which write
#                                      trajectories.jsonl as their trials finish, with the
#                                      file's size: the peak at 10,000 must stay within
#                                      1.2x of the one at 1,000
#   scripts/bench.sh effects [MIB]    a command agent's effects log of MIB MiB (default 16)
#                                      of distinct keys, 20 bytes a line: written by one
#                                      session and then appended again by three more
#                                      ("once"), and spread over MIB sessions of just
#                                      under 1 MiB each plus one that repeats the first
#                                      session's keys ("spread"); prints each run's peak
#                                      RSS, wall time, sessions recorded, the repeats
#                                      counted in its last session and the size of
#                                      sessions.jsonl, release build (or $BIN, such as an
#                                      older build to compare with)
#   scripts/bench.sh check-task [INPUT...]
#                                      `check-task` over the shipped tasks (default: the
#                                      default suite and every task of suites/examples/
#                                      tasks) at --jobs 1 and --jobs 2 in one invocation,
#                                      release build (or $BIN); prints the speed-up and
#                                      checks that the JSON reports are identical
#   scripts/bench.sh processes BASE_BIN
#                                      processes started per session, counted by the
#                                      kernel's process accounting (accton; root; the
#                                      harness under a child subreaper, so that what
#                                      bubblewrap orphans is still counted), split
#                                      by what started them: the agent, git, the sandbox
#                                      (bwrap, unshare before the harness made a check's
#                                      namespaces itself), the check shells (a check's
#                                      first process, a batch's supervisor, and its timeout before
#                                      the harness's binary supervised), the checks'
#                                      own programs, anything else (a session's
#                                      supervisor); for the default
#                                      suite (PROC_REPLICATES, default 2) and the gold
#                                      command agent under bwrap (GOLD_REPLICATES,
#                                      default 2), with BASE_BIN (a release build of an
#                                      earlier commit) and this checkout's release build
#                                      (or $BIN) in one
#                                      invocation; then each one's time over the bare
#                                      shell loop's with the verify cache off (and this
#                                      build's with it on, as the suite ships: the
#                                      median of TIME_RUNS runs, default 3), and
#                                      Inspect AI's time (the median of as many runs)
#                                      over this build's, both ways,
#                                      where it is installed (INSPECT, default
#                                      ~/.cache/inspect-venv/bin/inspect, else the venv
#                                      the tests make under ~/.cache/loopbench-venvs:
#                                      the same sessions as an Inspect task, a solver that
#                                      plays the scripted acts without a model and a scorer
#                                      that runs the checks; as many as the run's
#                                      sessions, or INSPECT_SESSIONS of them scaled to
#                                      the run's, which counts Inspect's start more than
#                                      once)
#   scripts/bench.sh container [ENGINE]
#                                      in one invocation, the cost of the container
#                                      sandbox against bubblewrap: a three-feature sh task
#                                      (with gold) checked by `check-task` and run by the
#                                      careful sim agent (CONTAINER_REPLICATES, default 2),
#                                      its checks under bubblewrap and in containers of an
#                                      image built from its Dockerfile (FROM
#                                      ubuntu:24.04, which the engine must have:
#                                      scripts/base-image.sh); prints seconds per check and
#                                      per session of each and their ratios, and how many
#                                      images each step built (the image is built once per
#                                      build-context hash: the second check-task and the
#                                      run build nothing), release build (or $BIN)
# Compare ratios within one run: these machines are shared and noisy.
# Each section prints wall time and peak memory (GNU time's "Maximum resident set size").
# Needs: cargo, awk, /usr/bin/time (Debian: apt-get install time); `processes` needs
# root and accton and dump-acct (Debian: apt-get install acct).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"

# Runs COMMAND... with stdout discarded and prints GNU time's wall, CPU and peak memory.
timed() { # timed SCRATCH_FILE COMMAND...
    local report="$1"
    shift
    /usr/bin/time -v "$@" 2>"$report" >/dev/null
    grep -E "Elapsed \(wall clock\)|Maximum resident set size|User time|System time" "$report"
}

# Writes DIR/sessions.csv (ROWS rows, every column of record::SESSION_COLUMNS) and
# DIR/trials.csv: arms json/markdown/yaml, four tasks, 12 sessions per trial (an
# initializer and 11 coding sessions), events drawn from a fixed-seed LCG so that the
# file is the same on every machine.
generate_sessions() {
    local dir="$1" rows="$2"
    mkdir -p "$dir"
    awk -v rows="$rows" -v dir="$dir" 'BEGIN {
        srand(20260704)
        split("json markdown yaml", arms, " ")
        split("ledgerly invoicer scheduler exporter", tasks, " ")
        pd["json"] = 0.092; pd["markdown"] = 0.183; pd["yaml"] = 0.154
        de["json"] = 0.017; de["markdown"] = 0.129; de["yaml"] = 0.079
        tr["json"] = 0.008; tr["markdown"] = 0.075; tr["yaml"] = 0.046
        s = dir "/sessions.csv"; t = dir "/trials.csv"
        print "trial_id,arm,task,replicate,session,kind,outcome,list_parse_ok,newly_claimed,premature_claims,newly_verified,regressions,told_false,desc_edits,step_edits,entries_removed,entries_added,tests_removed,tests_weakened,dup_side_effects,clean_tree,progress_updated,resumed,resume_success,flaky,features_verified,actions_failed,turns,input_tokens,output_tokens,cost_usd,error" > s
        print "trial_id,arm,task,replicate,features_verified,features_total,sessions,ended_by,premature_victory,turns,input_tokens,output_tokens,cost_usd,error" > t
        per_trial = 12; written = 0; rep = 0
        while (written < rows) {
            for (a = 1; a <= 3 && written < rows; a++) {
                for (k = 1; k <= 4 && written < rows; k++) {
                    arm = arms[a]; task = tasks[k]; id = arm ":" task ":" rep
                    interrupted = 0; features = 0
                    for (n = 0; n < per_trial && written < rows; n++) {
                        kind = (n == 0) ? "initializer" : "coding"
                        parsed = (rand() < 0.97)
                        p = (parsed && rand() < pd[arm]) ? 1 : 0
                        d = (parsed && rand() < de[arm]) ? 1 : 0
                        r = (rand() < tr[arm]) ? 1 : 0
                        resumed = interrupted
                        outcome = (rand() < 0.05) ? "interrupted" : "completed"
                        interrupted = (outcome == "interrupted")
                        nv = (rand() < 0.6) ? 1 : 0; features += nv
                        rs = resumed ? ((nv && !p) ? "true" : "false") : ""
                        if (parsed)
                            printf "%s,%s,%s,%d,%d,%s,%s,true,%d,%d,%d,0,%d,%d,0,0,0,%d,0,0,%s,%s,%s,%s,false,%d,0,%d,%d,%d,,\n", id, arm, task, rep, n, kind, outcome, p + nv, p, nv, (rand() < 0.05), d, r, (rand() < 0.9) ? "true" : "false", (rand() < 0.95) ? "true" : "false", resumed ? "true" : "false", rs, features, 20 + int(rand() * 40), 100000 + int(rand() * 900000), 2000 + int(rand() * 8000) > s
                        else
                            printf "%s,%s,%s,%d,%d,%s,%s,false,,,%d,0,,,,,,%d,0,0,%s,true,%s,%s,false,%d,0,%d,,,,\n", id, arm, task, rep, n, kind, outcome, nv, r, (rand() < 0.9) ? "true" : "false", resumed ? "true" : "false", rs, features, 20 + int(rand() * 40) > s
                        written++
                    }
                    printf "%s,%s,%s,%d,%d,40,%d,max_sessions,%s,600,,,,\n", id, arm, task, rep, features, per_trial, (rand() < 0.1) ? "true" : "false" > t
                }
            }
            rep++
        }
    }'
}

bench_report() {
    local rows="${1:-1000000}" baseline="${2:-}"
    local dir
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    echo "== report: generating $rows session rows in $dir/run"
    generate_sessions "$dir/run" "$rows"
    ls -l "$dir/run"
    (cd "$root" && cargo build --release --quiet)
    # A second binary (an older build, say) runs on the same data in the same session,
    # so that the two are compared on one machine state, and its tables must agree.
    local bins=("$root/target/release/loopbench")
    [[ -n "$baseline" ]] && bins+=("$baseline")
    local bin n=0
    for bin in "${bins[@]}"; do
        n=$((n + 1))
        "$bin" report "$dir/run" --format csv >/dev/null # warm the page cache
        echo "== report: $bin report (release)"
        timed "$dir/time.txt" "$bin" report "$dir/run" --format md
        cp "$dir/run/summary.csv" "$dir/summary$n.csv"
    done
    if [[ -n "$baseline" ]]; then
        cmp "$dir/summary1.csv" "$dir/summary2.csv" && echo "summary.csv identical"
    fi
}

# The median of the numbers given (the lower middle one of an even count).
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# Seconds of wall time of a command, to two decimals.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

# The same per-session work without the harness: copy the task's repo and gold files,
# git init/add/commit, run every verify command once. Prints seconds per session.
bare_session_seconds() {
    local suite="$1" sessions="$2" scratch="${3:-/dev/shm}"
    local tasks=("$suite"/tasks/*/)
    local start end i=0
    start=$(date +%s.%N)
    while [ "$i" -lt "$sessions" ]; do
        local task="${tasks[$((i % ${#tasks[@]}))]}"
        local work
        work="$(mktemp -d -p "$scratch")"
        cp -r "$task/repo/." "$work/"
        for gold in "$task"/oracle/gold/*/; do cp -r "$gold/." "$work/"; done
        (
            cd "$work"
            git init -q -b main && git add -A &&
                git -c user.name=bench -c user.email=bench@localhost commit -qm s
            grep -E '^verify = ' "$task/task.toml" | sed -E 's/^verify = "(.*)"$/\1/' |
                while IFS= read -r cmd; do sh -c "$cmd" >/dev/null 2>&1 || true; done
        )
        rm -rf "$work"
        i=$((i + 1))
    done
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" -v n="$sessions" 'BEGIN { printf "%.4f", (b - a) / n }'
}

bench_run() {
    local suite="${1:-$root/suites/seed-replication}"
    (cd "$root" && cargo build --release --quiet)
    local bin="$root/target/release/loopbench" dir
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    echo "== run: $suite (release)"
    local t1 t2
    t1=$(seconds "$bin" run "$suite" --quiet --jobs 1 --out "$dir/jobs1")
    t2=$(seconds "$bin" run "$suite" --quiet --jobs 2 --out "$dir/jobs2")
    local sessions
    sessions=$(($(wc -l <"$dir/jobs1/sessions.csv") - 1))
    cmp -s "$dir/jobs1/sessions.csv" "$dir/jobs2/sessions.csv" && same=yes || same=NO
    echo "sessions: $sessions (tables identical at jobs 1 and 2: $same)"
    echo "harness --jobs 1: ${t1}s"
    echo "harness --jobs 2: ${t2}s"
    local sample=$((sessions < 200 ? sessions : 200)) per bare
    per=$(bare_session_seconds "$suite" "$sample")
    bare=$(awk -v p="$per" -v n="$sessions" 'BEGIN { printf "%.2f", p * n }')
    echo "bare shell loop: ${per}s per session x $sessions sessions = ${bare}s (one core, every check run every session)"
    awk -v h1="$t1" -v h2="$t2" -v b="$bare" 'BEGIN {
        printf "harness/bare: jobs 1 %.2f, jobs 2 %.2f (below 1: the verify cache saves more than the harness costs)\n", h1 / b, h2 / b
    }'
}

# A suite in DIR over SUITE's tasks whose one agent is a command agent doing one feature
# per session from a copy of the gold files outside the tasks (DIR/answers, shown to
# the sandbox read-only): real sessions through the agent's sandbox, with its checks
# there too. MODE is "bwrap" or "none".
make_gold_suite() {
    local suite="$1" dir="$2" mode="$3" replicates="$4"
    mkdir -p "$dir"
    local answers="${dir%/*}/answers" tasks="" t
    if [[ ! -d "$answers" ]]; then
        mkdir -p "$answers"
        for t in "$suite"/tasks/*/; do
            t="${t%/}"
            cp -r "$t/oracle/gold" "$answers/${t##*/}"
        done
    fi
    for t in "$suite"/tasks/*/; do tasks+="\"${t%/}\", "; done
    cat >"$dir/gold.sh" <<'AGENT'
#!/bin/sh
# One feature per session: the gold files of F<session>, then a commit.
id="F$LOOPBENCH_SESSION"
[ -d "$ANSWERS/$LOOPBENCH_TASK/$id" ] || exit 0
cp -r "$ANSWERS/$LOOPBENCH_TASK/$id/." .
git add -A >/dev/null 2>&1 && git commit -qm "$id" >/dev/null 2>&1
# As a CLI's transcripts grow (bench.sh bounds).
[ -n "${HOME_KIB:-}" ] && head -c "${HOME_KIB}K" /dev/urandom >>"$HOME/transcript.log"
exit 0
AGENT
    chmod 755 "$dir/gold.sh"
    local ro=""
    [[ "$mode" == bwrap ]] && ro="sandbox_ro = [\"$answers\"]"
    cat >"$dir/suite.toml" <<SUITE
name = "gold-$mode"
seed = 20260704
replicates = $replicates
tasks = [${tasks%, }]

[agents.gold]
driver = "command"
program = "./gold.sh"
timeout = "60s"
sandbox = "$mode"
$ro
env = { ANSWERS = "$answers", HOME_KIB = "${HOME_KIB:-}" }

[[arm]]
name = "gold"
agent = "gold"
list_format = "json"
initializer = false
max_sessions = 12
SUITE
}

# The real-CLI dry run (suites/real-cli-dryrun) in DIR with its agents' sandbox set to
# MODE, its relative paths made absolute.
make_dryrun_suite() {
    local dir="$1" mode="$2"
    mkdir -p "$dir"
    sed -e "s#\"\.\./\.\./#\"$root/#" -e "s#\"\.\./examples/#\"$root/suites/examples/#" \
        -e "s#scenario = \"scenario.jsonl\"#scenario = \"$root/suites/real-cli-dryrun/scenario.jsonl\"#" \
        -e "s#^sandbox = \"bwrap\"#sandbox = \"$mode\"#" \
        "$root/suites/real-cli-dryrun/suite.toml" >"$dir/suite.toml"
}

bench_sandbox() {
    local suite="${1:-$root/suites/seed-replication}" replicates="${GOLD_REPLICATES:-6}"
    (cd "$root" && cargo build --release --quiet)
    local bin="$root/target/release/loopbench" dir
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    echo "== sandbox: $bin (release, --jobs 2), $(id -un) on $(nproc) cores"
    "$bin" validate "$root/suites/real-cli-dryrun" 2>/dev/null | grep -i "sandbox" || true

    # 1. The default suite's tasks, a command agent doing real sessions, with and
    # without the agent sandbox (its checks follow it).
    make_gold_suite "$suite" "$dir/gold-none" none "$replicates"
    make_gold_suite "$suite" "$dir/gold-bwrap" bwrap "$replicates"
    "$bin" validate "$dir/gold-bwrap" >/dev/null
    # A run takes a few seconds, so one run of each is noise: five of each, alternating,
    # and the medians.
    local none boxed same i nones=() boxeds=()
    for i in 1 2 3 4 5; do
        rm -rf "$dir/out-gold-none" "$dir/out-gold-bwrap"
        nones+=("$(seconds "$bin" run "$dir/gold-none" --quiet --jobs 2 --out "$dir/out-gold-none")")
        boxeds+=("$(seconds "$bin" run "$dir/gold-bwrap" --quiet --jobs 2 --out "$dir/out-gold-bwrap")")
    done
    none=$(median "${nones[@]}")
    boxed=$(median "${boxeds[@]}")
    echo "gold agent runs, sandbox = \"none\": ${nones[*]}; \"bwrap\": ${boxeds[*]} (seconds)"
    local sessions=$(($(wc -l <"$dir/out-gold-none/sessions.csv") - 1))
    cut -d, -f2- "$dir/out-gold-none/sessions.csv" >"$dir/a.csv"
    cut -d, -f2- "$dir/out-gold-bwrap/sessions.csv" >"$dir/b.csv"
    cmp -s "$dir/a.csv" "$dir/b.csv" && same=yes || same=NO
    echo "gold agent on $(basename "$suite")'s tasks, $sessions sessions, sandbox = \"none\": ${none}s (median)"
    echo "gold agent, sandbox = \"bwrap\" (agent and checks sandboxed): ${boxed}s (median)"
    # Each of these sessions (a copy and a commit) starts two sandboxes of its own, the
    # agent's and its checks', which a session of a real agent would not notice.
    awk -v h="$none" -v b="$boxed" 'BEGIN { printf "bwrap/none: %.2f (the cost of two sandbox starts per session)\n", b / h }'
    echo "sessions.csv identical but for the arm's name: $same"

    # 2. The default suite itself (the built-in sim agent, which is the harness's own
    # code): its checks on the host against under the sandbox.
    mkdir -p "$dir/boxed"
    cp -r "$suite/." "$dir/boxed/"
    sed -i '0,/^name = /s//verify_sandbox = "bwrap"\nname = /' "$dir/boxed/suite.toml"
    local host vboxed
    host=$(seconds "$bin" run "$suite" --quiet --jobs 2 --out "$dir/host")
    vboxed=$(seconds "$bin" run "$dir/boxed" --quiet --jobs 2 --out "$dir/bwrap")
    cmp -s "$dir/host/sessions.csv" "$dir/bwrap/sessions.csv" && same=yes || same=NO
    echo "default suite, checks on the host: ${host}s; under bwrap: ${vboxed}s"
    awk -v h="$host" -v b="$vboxed" 'BEGIN { printf "bwrap/host: %.2f (target <= 1.3)\n", b / h }'
    echo "sessions.csv identical: $same"

    # 3. The real-CLI dry run, before (no sandbox) and after (bwrap).
    local clis="${LOOPBENCH_CLI_DIR:-$HOME/.cache/loopbench-clis}"
    if [[ -x "$clis/npm/node_modules/.bin/claude" && -x "$clis/aider/bin/aider" ]]; then
        make_dryrun_suite "$dir/dry-none" none
        make_dryrun_suite "$dir/dry-bwrap" bwrap
        local path="$clis/npm/node_modules/.bin:$clis/aider/bin:$PATH" before after
        before=$(PATH="$path" seconds "$bin" run "$dir/dry-none" --quiet --jobs 1 --out "$dir/dry1")
        after=$(PATH="$path" seconds "$bin" run "$dir/dry-bwrap" --quiet --jobs 1 --out "$dir/dry2")
        cut -d, -f1-27 "$dir/dry1/sessions.csv" >"$dir/a.csv"
        cut -d, -f1-27 "$dir/dry2/sessions.csv" >"$dir/b.csv"
        cmp -s "$dir/a.csv" "$dir/b.csv" && same=yes || same=NO
        echo "real-CLI dry run (3 CLIs, 18 sessions, --jobs 1), sandbox = \"none\": ${before}s"
        echo "real-CLI dry run, sandbox = \"bwrap\": ${after}s"
        awk -v h="$before" -v b="$after" 'BEGIN { printf "bwrap/none: %.2f\n", b / h }'
        echo "the sessions' acts identical: $same"
    else
        echo "real-CLI dry run skipped: the CLIs are not installed in $clis (.ci/run installs them)"
    fi
}

# A suite in DIR over the sh task in TASK_DIR whose one agent, sandboxed, fetches
# http://127.0.0.1:PORT/ with curl each session when NET is 1 (its sandbox query
# declares that service; sandbox_network = true), and does nothing else.
make_net_suite() {
    local dir="$1" task="$2" port="$3" net="$4" replicates="$5"
    mkdir -p "$dir"
    cat >"$dir/agent.sh" <<'AGENT'
#!/bin/sh
# loopbench: sandbox-query
if [ -n "${LOOPBENCH_SANDBOX_QUERY:-}" ]; then echo "net 127.0.0.1:$PORT"; exit 0; fi
if [ "$NET" = 1 ]; then curl -fsS -m 10 "http://127.0.0.1:$PORT/" >/dev/null || exit 3; fi
exit 0
AGENT
    chmod 755 "$dir/agent.sh"
    local network=""
    [[ "$net" == 1 ]] && network="sandbox_network = true"
    cat >"$dir/suite.toml" <<SUITE
name = "net-$net"
seed = 20261206
replicates = $replicates
tasks = ["$task"]

[agents.curl]
driver = "command"
program = "./agent.sh"
timeout = "60s"
sandbox = "bwrap"
$network
env = { PORT = "$port", NET = "$net" }

[[arm]]
name = "curl"
agent = "curl"
list_format = "json"
initializer = false
max_sessions = 6
SUITE
}

bench_network() {
    local base="${1:-}" replicates="${NET_REPLICATES:-4}" dir server=""
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"; [[ -n "$server" ]] && kill "$server" 2>/dev/null' RETURN
    if [[ -z "$base" ]]; then
        # The commit before the network namespace: the parent of the first commit that
        # added src/sandbox/net/. Built from an archive of it into the same target
        # directory, so that only loopbench itself is compiled again.
        local first rev
        first=$(git -C "$root" log --diff-filter=A --format=%H -- src/sandbox/net/mod.rs | tail -1)
        rev=$(git -C "$root" rev-parse "$first^")
        echo "== network: building $rev (before src/sandbox/net/) as the --share-net baseline"
        mkdir -p "$dir/base-src"
        git -C "$root" archive "$rev" | tar -x -C "$dir/base-src"
        cargo build --release --quiet --manifest-path "$dir/base-src/Cargo.toml" --target-dir "$root/target"
        cp "$root/target/release/loopbench" "$dir/loopbench-base"
        base="$dir/loopbench-base"
    fi
    (cd "$root" && cargo build --release --quiet)
    local bin="$root/target/release/loopbench"
    echo "== network: $bin against $base (release, --jobs 1), $(id -un) on $(nproc) cores"
    make_sh_task "$dir"
    mkdir -p "$dir/www" && echo "hello" >"$dir/www/index.html"
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    python3 -m http.server --bind 127.0.0.1 --directory "$dir/www" "$port" >/dev/null 2>&1 &
    server=$!
    local tries=0
    until curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; do
        tries=$((tries + 1))
        [[ $tries -lt 100 ]] || { echo "the host service did not start" >&2; return 1; }
        sleep 0.1
    done
    make_net_suite "$dir/net" "$dir/task" "$port" 1 "$replicates"
    make_net_suite "$dir/none" "$dir/task" "$port" 0 "$replicates"
    "$bin" validate "$dir/net" >/dev/null
    local i olds=() news=() nones=()
    for i in 1 2 3 4 5; do
        rm -rf "$dir/out-old" "$dir/out-new" "$dir/out-none"
        olds+=("$(seconds "$base" run "$dir/net" --quiet --jobs 1 --out "$dir/out-old")")
        news+=("$(seconds "$bin" run "$dir/net" --quiet --jobs 1 --out "$dir/out-new")")
        nones+=("$(seconds "$bin" run "$dir/none" --quiet --jobs 1 --out "$dir/out-none")")
    done
    local sessions errors old new none
    sessions=$(($(wc -l <"$dir/out-new/sessions.csv") - 1))
    errors=0
    for out in out-old out-new out-none; do
        # A session whose fetch failed says so in its error.
        errors=$((errors + $(python3 -c 'import csv, sys; print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["error"]))' "$dir/$out/sessions.csv")))
    done
    old=$(median "${olds[@]}")
    new=$(median "${news[@]}")
    none=$(median "${nones[@]}")
    echo "runs of $sessions sessions, --share-net (before): ${olds[*]}; own namespace, relay and proxy: ${news[*]}; no network: ${nones[*]} (seconds)"
    echo "sessions with an error (a fetch that failed): $errors"
    echo "proxied log lines of the last run: $(cat "$dir"/out-new/agents/*/session-*.net.log | grep -c '^allowed')"
    awk -v o="$old" -v n="$new" -v z="$none" -v s="$sessions" 'BEGIN {
        printf "per session: --share-net %.1f ms, own namespace + relay + proxy %.1f ms, no network %.1f ms\n", 1000 * o / s, 1000 * n / s, 1000 * z / s
        printf "cost of the network namespace and relay against --share-net: %+.1f ms per session (%.2fx the run)\n", 1000 * (n - o) / s, n / o
    }'
}

# A task of three features checked by POSIX sh, in DIR/task.
make_sh_task() {
    local dir="$1/task"
    mkdir -p "$dir/repo/src" "$dir/repo/tests" "$dir/oracle/tests"
    echo "source goes here" >"$dir/repo/src/README"
    {
        echo 'name = "shtask"'
        echo 'goal = "three files"'
        echo "tests = { glob = \"tests/**/*.sh\", count_pattern = '^# test' }"
    } >"$dir/task.toml"
    for n in 1 2 3; do
        printf '# test: f%s exists\ntest -f src/f%s.txt\n' "$n" "$n" >"$dir/repo/tests/check_F$n.sh"
        cp "$dir/repo/tests/check_F$n.sh" "$dir/oracle/tests/"
        printf '\n[[feature]]\nid = "F%s"\ndescription = "file %s exists"\nverify = "sh tests/check_F%s.sh"\n' \
            "$n" "$n" "$n" >>"$dir/task.toml"
    done
}

bench_replay() {
    local count="${1:-500}"
    (cd "$root" && cargo build --release --quiet)
    local bin="$root/target/release/loopbench" dir
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    make_sh_task "$dir"
    mkdir -p "$dir/traces"
    local i
    for i in $(seq 0 $((count - 1))); do
        printf '%s\n' \
            '{"op":"session","n":1}' \
            "{\"op\":\"write\",\"path\":\"src/f$((i % 3 + 1)).txt\",\"content\":\"x\"}" \
            '{"op":"run","cmd":"git add -A && git commit -qm s1"}' \
            '{"op":"end","status":"completed"}' \
            '{"op":"session","n":2}' \
            "{\"op\":\"write\",\"path\":\"PROGRESS.md\",\"content\":\"trace $i\"}" \
            '{"op":"end","status":"completed"}' >"$dir/traces/t$(printf '%04d' "$i").jsonl"
    done
    echo "== replay: $count traces of two sessions each (release)"
    local t1 t2
    t1=$(seconds "$bin" replay "$dir/traces" --task "$dir/task" --format json --quiet --jobs 1 --out "$dir/jobs1")
    t2=$(seconds "$bin" replay "$dir/traces" --task "$dir/task" --format json --quiet --jobs 2 --out "$dir/jobs2")
    local same=yes f
    for f in sessions.csv trials.csv summary.csv summary.json summary.md; do
        cmp -s "$dir/jobs1/$f" "$dir/jobs2/$f" || same=NO
    done
    echo "replay --jobs 1: ${t1}s"
    echo "replay --jobs 2: ${t2}s"
    awk -v a="$t1" -v b="$t2" 'BEGIN { printf "speed-up jobs 2 / jobs 1: %.2fx\n", a / b }'
    echo "tables identical at jobs 1 and 2: $same"
}

# Milliseconds from navigation start until the script of report.html PAGE finished
# (performance.now() logged at its end), in headless Chromium: the load a reader waits
# for. The process's own wall time is printed too; with --dump-dom it includes writing
# the whole DOM (the data blob included) to stdout.
load_ms() {
    local page="$1" profile="$2" timed="$2/timed.html"
    mkdir -p "$profile"
    python3 - "$page" "$timed" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
end = text.rindex("</script>")
text = text[:end] + '\nconsole.log("loopbench-loaded " + performance.now());\n' + text[end:]
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY
    chromium --headless --no-sandbox --disable-gpu --no-first-run --enable-logging=stderr \
        --v=0 --user-data-dir="$profile" --dump-dom "file://$timed" 2>&1 >/dev/null |
        sed -n 's/.*"loopbench-loaded \([0-9.]*\)".*/\1/p' | head -1
}

bench_html() {
    local trials="${1:-10000}"
    local dir
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    command -v chromium >/dev/null || { echo "bench html needs chromium" >&2; return 1; }
    (cd "$root" && cargo build --release --quiet)
    local bin="$root/target/release/loopbench"
    echo "== html: the default run (release)"
    "$bin" run "$root/suites/seed-replication" --quiet --out "$dir/default" >/dev/null
    report_html_figures "$dir/default/report.html" "$dir/profile"
    echo "== html: a generated run of $trials trials of 12 sessions"
    generate_sessions "$dir/big" "$((trials * 12))"
    "$bin" report "$dir/big" --html >/dev/null
    report_html_figures "$dir/big/report.html" "$dir/profile"
}

report_html_figures() {
    local page="$1" profile="$2"
    load_ms "$page" "$profile" >/dev/null # the first start fills Chromium's caches
    echo "report.html: $(du -k "$page" | cut -f1) KiB"
    echo "loaded and drawn in headless Chromium after: $(load_ms "$page" "$profile") ms"
}

bench_weekly() {
    local runs="${1:-200}" baseline="${2:-}"
    local dir
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    echo "== weekly: generating $runs runs of 12000 session rows in $dir"
    generate_sessions "$dir/one" 12000
    local i
    for ((i = 0; i < runs; i++)); do
        local run="$dir/results/bench/r$(printf '%04d' "$i")"
        mkdir -p "$run"
        cp "$dir/one/sessions.csv" "$dir/one/trials.csv" "$run/"
        # Two runs a day from 2026-06-01 (a Monday), so 200 runs cover 15 ISO weeks.
        local day=$((i / 2)) hour=$((8 + 10 * (i % 2)))
        local started
        started=$(date -u -d "2026-06-01 +$day days $hour:00" +%Y-%m-%dT%H:%M:%SZ)
        printf '{"suite":"bench","arms":["json","markdown","yaml"],"started":"%s","simulated":false}\n' \
            "$started" >"$run/manifest.json"
    done
    (cd "$root" && cargo build --release --quiet)
    # A second binary (an older build, say) runs on the same data in the same session,
    # so that the two are compared on one machine state, and its tables must agree.
    local bins=("$root/target/release/loopbench")
    [[ -n "$baseline" ]] && bins+=("$baseline")
    local bin n=0
    for bin in "${bins[@]}"; do
        n=$((n + 1))
        "$bin" weekly "$dir/results" --out "$dir/weekly$n" >/dev/null 2>&1 || true # warm the cache
        echo "== weekly: $bin weekly over $runs runs (release)"
        timed "$dir/time.txt" "$bin" weekly "$dir/results" --out "$dir/weekly$n"
        echo "weeks: $(($(wc -l <"$dir/weekly$n/weekly.csv") - 1)) rows in weekly.csv"
    done
    if [[ -n "$baseline" ]]; then
        cmp "$dir/weekly1/weekly.csv" "$dir/weekly2/weekly.csv" && echo "weekly.csv identical"
    fi
}

# Writes the run directory OUT of about TRIALS trials from the finished run BASE: its
# manifest with the replicates that give that many trials, and per (arm, task,
# replicate) the records of BASE's trial of the same arm and task (replicate modulo
# BASE's), renamed. Records are written replicate by replicate, arms and tasks
# interleaved, so that (like a run at --jobs 2) they are not in the tables' order.
scale_run() {
    local base="$1" out="$2" trials="$3"
    mkdir -p "$out"
    python3 - "$base" "$out" "$trials" <<'PY'
import json, math, sys
base, out, trials = sys.argv[1], sys.argv[2], int(sys.argv[3])
manifest = json.load(open(f"{base}/manifest.json"))
cells = len(manifest["arms"]) * len(manifest["tasks"])
base_reps = manifest["replicates"]
reps = max(1, math.ceil(trials / cells))
def load(name):
    return [json.loads(line) for line in open(f"{base}/{name}") if line.endswith("\n")]
trial_of = {t["trial_id"]: t for t in load("trials.jsonl")}
sessions_of = {}
for s in load("sessions.jsonl"):
    sessions_of.setdefault(s["trial_id"], []).append(s)
def renamed(record, arm, task, rep):
    record = dict(record)
    record["trial_id"] = f"{arm}:{task}:{rep}"
    record["replicate"] = rep
    return json.dumps(record, separators=(",", ":")) + "\n"
import os
steps_of = {}
if os.path.exists(f"{base}/trajectories.jsonl"):
    for line in load("trajectories.jsonl"):
        steps_of.setdefault(line["trial_id"], []).append(line)
def moved(line, arm, task, rep):
    line = dict(line)
    line["trial_id"] = f"{arm}:{task}:{rep}"
    return json.dumps(line, separators=(",", ":")) + "\n"
with open(f"{out}/trials.jsonl", "w") as t_out, open(f"{out}/sessions.jsonl", "w") as s_out, \
        open(f"{out}/trajectories.jsonl", "w") as j_out:
    for rep in range(reps):
        for task in reversed(manifest["tasks"]):
            for arm in manifest["arms"]:
                source = f"{arm}:{task}:{rep % base_reps}"
                for s in sessions_of.get(source, []):
                    s_out.write(renamed(s, arm, task, rep))
                for j in steps_of.get(source, []):
                    j_out.write(moved(j, arm, task, rep))
                t_out.write(renamed(trial_of[source], arm, task, rep))
manifest["replicates"] = reps
json.dump(manifest, open(f"{out}/manifest.json", "w"), indent=2)
print(reps * cells)
PY
}

# The peak RSS in KiB of a command (GNU time), its output discarded.
peak_kib() {
    local report
    report="$(mktemp)"
    local status=0
    /usr/bin/time -v "$@" 2>"$report" >/dev/null || status=$?
    # 1 is a verdict (an arm differs), not a failure.
    if [ "$status" -gt 1 ]; then
        cat "$report" >&2
        rm -f "$report"
        return 1
    fi
    sed -n 's/.*Maximum resident set size (kbytes): //p' "$report"
    rm -f "$report"
}

# The binary to time: $BIN when set (an existing build, to skip compiling), else this
# checkout's release build, built first.
release_bin() {
    if [ -n "${BIN:-}" ]; then
        echo "$BIN"
    else
        (cd "$root" && cargo build --release --quiet) >&2 || return 1
        echo "$root/target/release/loopbench"
    fi
}

bench_memory() {
    local sizes=("$@")
    [ ${#sizes[@]} -eq 0 ] && sizes=(10 100 1000 10000)
    local bin dir
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    # A run's own peak must not grow with its trials: the default suite at 10 and at 40
    # replicates (the same run four times over) within 1.1x.
    echo "== memory: the default suite at --replicates 10 and 40 ($bin)"
    local r peaks=()
    for r in 10 40; do
        peaks+=("$(peak_kib "$bin" run "$root/suites/seed-replication" --replicates "$r" --quiet --out "$dir/replicates$r")")
        echo "--replicates $r: $(($(wc -l <"$dir/replicates$r/sessions.csv") - 1)) sessions, peak RSS ${peaks[-1]} KiB"
        rm -rf "$dir/replicates$r"
    done
    awk -v a="${peaks[0]}" -v b="${peaks[1]}" \
        'BEGIN { printf "peak at 40 replicates / at 10: %.2fx (target: 1.1x or less)\n", b / a }'
    echo "== memory: the default suite's arms json and markdown, 20 replicates ($bin)"
    "$bin" run "$root/suites/seed-replication" --arms json,markdown --replicates 20 \
        --quiet --out "$dir/base" >/dev/null
    printf '%8s %9s %18s %18s %14s\n' trials sessions "resume peak KiB" "report peak KiB" "report.html KiB"
    local n
    for n in "${sizes[@]}"; do
        local run="$dir/run$n" trials sessions resume report
        trials=$(scale_run "$dir/base" "$run" "$n")
        sessions=$(wc -l <"$run/sessions.jsonl")
        resume=$(peak_kib "$bin" resume "$run" --quiet)
        report=$(peak_kib "$bin" report "$run" --html)
        printf '%8s %9s %18s %18s %14s\n' "$trials" "$sessions" "$resume" "$report" \
            "$(du -sk "$run/report.html" | cut -f1)"
        rm -rf "$run"
    done
}

# A suite in DIR over a one-feature sh task whose command agent appends keys of 20
# bytes to its effects log: MODE "once" writes KEYS keys in session 1 and appends them
# all again in sessions 2 to 4; MODE "spread" writes PER new keys a session for
# SESSIONS - 1 sessions and repeats session 1's keys in the last.
effects_suite() { # effects_suite DIR MODE KEYS PER SESSIONS
    local dir="$1" mode="$2" keys="$3" per="$4" sessions="$5"
    mkdir -p "$dir/shtask/repo/src" "$dir/shtask/repo/tests" "$dir/shtask/oracle/tests"
    echo "source goes here" >"$dir/shtask/repo/src/README"
    printf '# test: f1 exists\ntest -f src/f1.txt\n' >"$dir/shtask/repo/tests/check_F1.sh"
    cp "$dir/shtask/repo/tests/check_F1.sh" "$dir/shtask/oracle/tests/"
    cat >"$dir/shtask/task.toml" <<'EOF'
name = "shtask"
goal = "one file"
tests = { glob = "tests/**/*.sh", count_pattern = '^# test' }

[[feature]]
id = "F1"
category = "functional"
description = "file 1 exists"
steps = ["create src/f1.txt"]
verify = "sh tests/check_F1.sh"
EOF
    cat >"$dir/effects.sh" <<EOF
#!/bin/sh
n=\$LOOPBENCH_SESSION
keys() { seq -f 'remind:INV-%08.0f' "\$1" "\$2" >>"\$LOOPBENCH_EFFECTS"; }
if [ $mode = once ]; then keys 1 $keys
elif [ "\$n" -lt $sessions ]; then keys \$(( (n - 1) * $per + 1 )) \$(( n * $per ))
else keys 1 $per
fi
EOF
    chmod +x "$dir/effects.sh"
    cat >"$dir/suite.toml" <<EOF
name = "effects-bench"
seed = 1
replicates = 1
tasks = ["shtask"]

[agents.effects]
driver = "command"
program = "./effects.sh"
timeout = "10m"

[[arm]]
name = "effects"
agent = "effects"
list_format = "json"
initializer = false
max_sessions = $sessions
EOF
}

bench_effects() {
    local mib="${1:-16}"
    local bin dir
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    # 52,428 lines of 20 bytes: 256 bytes short of a MiB.
    local per=52428
    local keys=$((mib * per))
    echo "== effects: a log of $mib MiB of distinct keys ($bin)"
    printf '%-8s %9s %13s %13s %9s %12s\n' scenario sessions "last repeats" "peak RSS KiB" "wall" "jsonl bytes"
    local mode sessions
    for mode in once spread; do
        sessions=4
        [ "$mode" = spread ] && sessions=$((mib + 1))
        effects_suite "$dir/$mode" "$mode" "$keys" "$per" "$sessions"
        local report="$dir/$mode.time"
        /usr/bin/time -v "$bin" run "$dir/$mode" --quiet --out "$dir/$mode/out" 2>"$report" >/dev/null || true
        local peak wall ran repeats
        peak=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$report")
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$report")
        ran=$(($(wc -l <"$dir/$mode/out/sessions.csv") - 1))
        repeats=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "dup_side_effects") c = i; next } { last = $c } END { print last }' "$dir/$mode/out/sessions.csv")
        printf '%-8s %9s %13s %13s %9s %12s\n' "$mode" "$ran" "$repeats" "$peak" "$wall" \
            "$(wc -c <"$dir/$mode/out/sessions.jsonl")"
    done
}

# check-task over INPUT... (default: every shipped task) at --jobs 1 and --jobs 2; the
# binary is the release build, or $BIN when set (an existing build, to skip compiling).
bench_check_task() {
    local bin dir
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    local inputs=("$@")
    if [ ${#inputs[@]} -eq 0 ]; then
        inputs=("$root/suites/seed-replication" "$root"/suites/examples/tasks/*/)
    fi
    echo "== check-task: ${inputs[*]#"$root"/} (--repeats 3)"
    local jobs start end
    declare -A took
    for jobs in 1 2; do
        start=$(date +%s.%N)
        "$bin" check-task "${inputs[@]}" --format json --quiet --jobs "$jobs" >"$dir/jobs$jobs.json" || true
        end=$(date +%s.%N)
        took[$jobs]=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
        echo "check-task --jobs $jobs: ${took[$jobs]}s"
    done
    awk -v a="${took[1]}" -v b="${took[2]}" 'BEGIN { printf "speed-up jobs 2 / jobs 1: %.2fx\n", a / b }'
    # max_ms differs from run to run; nothing else may.
    local same=yes
    cmp -s <(grep -v max_ms "$dir/jobs1.json") <(grep -v max_ms "$dir/jobs2.json") || same=NO
    echo "reports identical at jobs 1 and 2 (max_ms aside): $same"
}

# Runs COMMAND... under the kernel's process accounting (written to FILE); prints the
# pid of its parent, a child subreaper whose descendants are the processes to count
# (the harness's own pid is written to FILE.harness).
# Accounting is the machine's: other users' processes are in FILE too, and left out by
# their ancestry. A process records its parent as it is at its exit: bubblewrap's
# outer process often exits before the sandbox's first process (its pid 1), which is
# then re-parented; under the subreaper it is re-parented to it, instead of to init
# (where it and everything it started would be lost to the count).
accounted() { # accounted FILE COMMAND...
    local file="$1" pid
    shift
    : >"$file"
    : >"$file.sim-pids"
    accton "$file" >/dev/null
    python3 -c '
import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
child = os.fork()
if child == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
open(sys.argv[1], "w").write(f"{child}\n")
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
' "$file.harness" env LOOPBENCH_SIM_PID_LOG="$file.sim-pids" "$@" >/dev/null 2>&1 &
    pid=$!
    wait "$pid" || true
    accton off >/dev/null
    echo "$pid"
}

# Prints the processes per session of an accounted run: the descendants of ROOT (the
# subreaper of `accounted`, whose child is the harness, named in FILE.harness, and
# which adopts what the harness's children orphaned) in the accounting FILE, split by
# what started them. NAME: the harness's binary, which its `supervise` processes run;
# AGENT: the basenames of a command agent's program (which the harness may start in a
# sandbox of its own without a supervisor around it, else the first process in the
# sandbox would read as a check's shell) and of the tools the sim agent runs, comma
# separated. A process the harness started itself (no wrapper between: a check on the
# host, cloned into namespaces of its own, the probe of those namespaces, or a command
# of the sim agent's) is the agent's when it or what it started is git or one of AGENT,
# else a check's shell (the sim's own run of a test script counts there: a few in a
# hundred sessions).
process_split() { # process_split FILE ROOT SESSIONS NAME [AGENT]
    python3 - "$@" <<'PY'
import collections, subprocess, sys

acct, root, sessions, harness = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4][:15]
agents = {a[:15] for a in sys.argv[5].split(",")} if len(sys.argv) > 5 else set()
# One record a process, written when it exits; a busy machine reuses pids, so a
# record's parent is the nearest later record of its parent's pid (a parent outlives
# its children; an orphan is counted under whoever reaped it, or not at all), else the
# nearest earlier one (a parent writes its record before its children are re-parented:
# a child that ends in between names a parent whose record came first).
records = []
for line in subprocess.run(["dump-acct", acct], capture_output=True, text=True).stdout.splitlines():
    f = [x.strip() for x in line.split("|")]
    if len(f) >= 12 and f[9].isdigit():
        records.append((f[0], int(f[9]), int(f[10])))
procs = {i: (comm, ppid) for i, (comm, _, ppid) in enumerate(records)}
kids = collections.defaultdict(list)
later = {}
top = None
orphans = []
for i in range(len(records) - 1, -1, -1):
    comm, pid, ppid = records[i]
    if ppid in later:
        kids[later[ppid]].append(i)
    else:
        orphans.append(i)
    later[pid] = i
    if pid == root and top is None:
        top = i
earlier = {}
orphans = set(orphans)
for i, (comm, pid, ppid) in enumerate(records):
    if i in orphans and ppid in earlier:
        kids[earlier[ppid]].append(i)
    earlier[pid] = i
root = top
WRAPPERS = ("bwrap", "unshare")
LABEL = {"git": "git", "check-wrap": "sandbox", "agent-wrap": "sandbox",
         "check-shell": "check shells", "batch-supervisor": "check shells",
         "check-program": "checks' own programs", "supervisor": "other", "agent": "agent"}

# A process's role from its parent's: the harness's direct children are its git, the
# wrappers of its checks, its own binary (`supervise`, around a command agent) or the
# sim agent's commands; below a wrapper the first other process is a check shell (or
# the agent), or the harness's own binary supervising a batch, each of whose children
# is a check's shell (or its helper clearing what a check left); a batch's supervisor
# shell (before the binary supervised) starts `timeout` for each check, which starts
# the check's shell; anything else a check shell starts is the check's own.
def agents_own(pid):
    stack = [pid]
    while stack:
        p = stack.pop()
        if procs[p][0] == "git" or procs[p][0] in agents:
            return True
        stack.extend(kids.get(p, []))
    return False

def role_of(child, parent, role):
    comm = procs[child][0]
    if role is None:
        if child in sim_children:
            return "agent"
        if comm in WRAPPERS:
            return role_of(child, parent, "check-wrap")
        if comm == "git":
            return "git"
        if comm == harness:
            return "supervisor"
        return "agent" if agents_own(child) else "check-shell"
    if role in ("git", "agent", "check-program"):
        return role
    if role in ("check-wrap", "agent-wrap"):
        if comm in WRAPPERS:
            # The sandbox's pid 1, whose child is the agent (and whatever the agent
            # orphaned): an agent's sandbox.
            if any(procs[k][0] in agents for k in kids.get(child, [])):
                return "agent-wrap"
            return role
        if role == "check-wrap":
            return "batch-supervisor" if comm == harness else "check-shell"
        return "agent"
    if role == "batch-supervisor":
        return "check-shell"
    if role == "supervisor":
        if comm in WRAPPERS:
            return "agent-wrap"
        return "supervisor" if comm == harness else "agent"
    batch_supervisor = any(procs[k][0] == "timeout" for k in kids.get(parent, []))
    if comm == "timeout" or procs[parent][0] == "timeout" or batch_supervisor:
        return "check-shell"
    return "check-program"

count = collections.Counter()
# The harness itself is not counted (its record is named by whichever of its threads
# ended last); what the subreaper adopted is counted as the harness's own children are.
harness_pid = int(open(acct + ".harness").read())
stack = [(c, None) for c in kids.get(root, []) if records[c][1] == harness_pid]
# The sim agent lives in the harness's process: the commands it starts without a shell
# are the harness's direct children, told from its own git by the pids the sim agent
# logged, in the order it started them (at --jobs 1 the harness's children end in that
# order; a pid may come back later, the machine's pids being few).
logged = [int(p) for p in open(acct + ".sim-pids").read().split()]
sim_children = set()
for c in sorted(k for h, _ in stack for k in kids.get(h, [])):
    if len(sim_children) < len(logged) and records[c][1] == logged[len(sim_children)]:
        sim_children.add(c)
if len(sim_children) != len(logged):
    sys.exit(f"bench: {len(logged) - len(sim_children)} of the {len(logged)} processes the sim agent "
             "logged are not among the harness's children in the accounting")
for child in kids.get(root, []):
    if records[child][1] != harness_pid:
        r = role_of(child, root, None)
        count[LABEL[r]] += 1
        stack.append((child, r))
while stack:
    pid, role = stack.pop()
    for child in kids.get(pid, []):
        r = role_of(child, pid, role)
        count[LABEL[r]] += 1
        stack.append((child, r))
total = sum(count.values())
harness_started = total - count["agent"] - count["checks' own programs"]
parts = ", ".join(f"{k} {count[k] / sessions:.2f}" for k in
                  ["agent", "git", "sandbox", "check shells", "checks' own programs", "other"])
print(f"{total / sessions:.2f} ({parts}); started by the harness: {harness_started / sessions:.2f}")
PY
}

# A copy of the suite in SUITE_DIR with `verify_cache = false`, into DIR.
suite_without_cache() { # suite_without_cache SUITE_DIR DIR
    cp -r "$1" "$2"
    python3 - "$2/suite.toml" <<'PY'
import sys
path = sys.argv[1]
head, sep, rest = open(path).read().partition("\n[")
open(path, "w").write(head.rstrip("\n") + "\nverify_cache = false\n" + sep + rest)
PY
}

bench_processes() {
    local base="${1:?usage: bench.sh processes BASE_BIN (a release build of an earlier commit)}"
    local suite="$root/suites/seed-replication" replicates="${PROC_REPLICATES:-2}"
    [ "$(id -u)" -eq 0 ] || { echo "bench processes needs root (process accounting)" >&2; return 1; }
    command -v accton >/dev/null && command -v dump-acct >/dev/null ||
        { echo "bench processes needs accton and dump-acct (Debian: apt-get install acct)" >&2; return 1; }
    local bin dir
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    # Both binaries under one name, the name their `supervise` processes carry.
    mkdir -p "$dir/before" "$dir/after"
    cp "$base" "$dir/before/loopbench"
    cp "$bin" "$dir/after/loopbench"
    make_gold_suite "$suite" "$dir/gold-bwrap" bwrap "${GOLD_REPLICATES:-2}"
    suite_without_cache "$suite" "$dir/nocache"
    echo "== processes: $base (before) against $bin (after), $(nproc) cores"
    # --jobs 1: which trial's check fills the verify cache first is then fixed, so that
    # both builds run the same checks.
    declare -A harness
    local which name pid sessions line same
    for name in default gold; do
        for which in before after; do
            local b="$dir/$which/loopbench" out="$dir/out-$name-$which"
            if [ "$name" = default ]; then
                pid=$(accounted "$dir/acct" "$b" run "$suite" --replicates "$replicates" --jobs 1 --quiet --out "$out")
            else
                pid=$(accounted "$dir/acct" "$b" run "$dir/gold-bwrap" --jobs 1 --quiet --out "$out")
            fi
            sessions=$(($(wc -l <"$out/sessions.csv") - 1))
            line=$(process_split "$dir/acct" "$pid" "$sessions" loopbench gold.sh,send_reminder)
            echo "$name suite, $which, $sessions sessions: processes a session $line"
            harness[$name-$which]=$(echo "$line" | sed -n 's/.*started by the harness: \([0-9.]*\)$/\1/p')
        done
        cmp -s "$dir/out-$name-before/sessions.csv" "$dir/out-$name-after/sessions.csv" && same=yes || same=NO
        echo "  sessions.csv identical before and after: $same"
        awk -v a="${harness[$name-before]}" -v b="${harness[$name-after]}" \
            'BEGIN { printf "  processes the harness starts a session, after/before: %.2f (target: 0.5 or less)\n", b / a }'
    done
    echo "== time over the bare shell loop (--jobs 1)"
    local per bare t took_before took_after took_default
    sessions=$(($(wc -l <"$dir/out-default-after/sessions.csv") - 1))
    for which in before after; do
        t=$(seconds "$dir/$which/loopbench" run "$dir/nocache" --replicates "$replicates" --jobs 1 --quiet --out "$dir/nocache-$which")
        echo "loopbench ($which), the verify cache off: ${t}s for $sessions sessions"
        if [ "$which" = before ]; then took_before=$t; else took_after=$t; fi
    done
    # As a user runs it: the suite as shipped, its verify cache on; the median of
    # TIME_RUNS runs (default 3), as for Inspect below, this machine's load moving a
    # single run by a tenth.
    local runs="${TIME_RUNS:-3}" k times
    times=()
    for k in $(seq "$runs"); do
        times+=("$(seconds "$dir/after/loopbench" run "$suite" --replicates "$replicates" --jobs 1 --quiet --out "$dir/default-timed-$k")")
    done
    took_default=$(median "${times[@]}")
    echo "loopbench (after), the verify cache on (the suite as shipped): ${took_default}s for $sessions sessions (median of ${times[*]})"
    per=$(bare_session_seconds "$suite" "$((sessions < 200 ? sessions : 200))")
    bare=$(awk -v p="$per" -v n="$sessions" 'BEGIN { printf "%.2f", p * n }')
    echo "bare shell loop: ${per}s a session x $sessions sessions = ${bare}s"
    awk -v b="$bare" -v x="$took_before" -v y="$took_after" -v d="$took_default" 'BEGIN {
        printf "loopbench/bare, the verify cache off: before %.2f, after %.2f (target: 0.4 or less)\n", x / b, y / b
        printf "loopbench/bare, the verify cache on: after %.2f\n", d / b
    }'
    local inspect took_inspect sample
    inspect="$(inspect_program)"
    if ! [ -x "$inspect" ] || ! "$(dirname "$inspect")/python" -c 'import inspect_ai' 2>/dev/null; then
        echo "Inspect AI/loopbench: skipped, Inspect AI is not installed ($inspect; set INSPECT to its inspect program)"
        return 0
    fi
    # The same sessions as an Inspect task (the scripted acts as a solver, no model;
    # every check as the scorer), one sample at a time as loopbench ran at --jobs 1.
    # Every session by default: a sample scaled up would count Inspect's own start (a
    # few seconds of imports) once per sample's worth of sessions.
    sample=$((sessions < ${INSPECT_SESSIONS:-$sessions} ? sessions : ${INSPECT_SESSIONS:-$sessions}))
    inspect_task "$dir/inspect_sessions.py"
    times=()
    for k in $(seq "$runs"); do
        # Inspect takes a task file by a relative path only.
        t=$(cd "$dir" && LOOPBENCH_SUITE="$suite" LOOPBENCH_SESSIONS="$sample" seconds "$inspect" eval \
            inspect_sessions.py --model none --max-samples 1 --log-dir "$dir/inspect-logs-$k" --display none)
        if ! "$(dirname "$inspect")/python" - "$dir/inspect-logs-$k" "$sample" <<'PY'; then
import glob, sys
from inspect_ai.log import read_eval_log
logs = glob.glob(sys.argv[1] + "/*.eval")
log = read_eval_log(logs[0]) if logs else None
ok = log is not None and log.status == "success" and len(log.samples or []) == int(sys.argv[2])
sys.exit(0 if ok and log.results.scores[0].metrics["accuracy"].value == 1.0 else 1)
PY
            echo "Inspect AI/loopbench: failed, Inspect's run did not score every session (its log: $dir/inspect-logs-$k)"
            return 1
        fi
        times+=("$t")
    done
    t=$(median "${times[@]}")
    took_inspect=$(awk -v t="$t" -v n="$sample" -v all="$sessions" 'BEGIN { printf "%.2f", t / n * all }')
    echo "Inspect AI ($("$(dirname "$inspect")/python" -c 'import inspect_ai; print(inspect_ai.__version__)')): ${t}s for $sample sessions (median of ${times[*]}), ${took_inspect}s for $sessions at that rate"
    awk -v i="$took_inspect" -v y="$took_after" -v d="$took_default" 'BEGIN {
        printf "Inspect AI/loopbench (after): %.2f against the suite as shipped (target: 5 or more), %.2f against its verify cache off\n", i / d, i / y
    }'
}

# The inspect program to compare with: $INSPECT, else the venv ~/.cache/inspect-venv,
# else the one the tests make (under $LOOPBENCH_VENV_CACHE, ~/.cache/loopbench-venvs).
inspect_program() {
    local found
    if [ -n "${INSPECT:-}" ]; then
        echo "$INSPECT"
        return
    fi
    for found in "$HOME/.cache/inspect-venv/bin/inspect" \
        "${LOOPBENCH_VENV_CACHE:-$HOME/.cache/loopbench-venvs}"/inspect-*/bin/inspect; do
        [ -x "$found" ] && { echo "$found"; return; }
    done
    echo "$HOME/.cache/inspect-venv/bin/inspect"
}

# Writes FILE, an Inspect AI task over the sessions of $LOOPBENCH_SUITE: each of its
# $LOOPBENCH_SESSIONS samples copies a task's repo and gold files and commits them (the
# scripted acts, a solver that calls no model), and its scorer runs every verify
# command of the task once, as the bare shell loop does.
inspect_task() { # inspect_task FILE
    cat >"$1" <<'PY'
import glob
import os
import shutil
import subprocess
import tempfile
import tomllib

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.solver import solver

SUITE = os.environ["LOOPBENCH_SUITE"]
SESSIONS = int(os.environ["LOOPBENCH_SESSIONS"])
TASKS = sorted(glob.glob(os.path.join(SUITE, "tasks", "*", "")))


@solver
def scripted_acts():
    async def solve(state, generate):
        task_dir = state.metadata["task"]
        work = tempfile.mkdtemp(dir="/dev/shm")
        shutil.copytree(os.path.join(task_dir, "repo"), work, dirs_exist_ok=True)
        for gold in sorted(glob.glob(os.path.join(task_dir, "oracle", "gold", "*", ""))):
            shutil.copytree(gold, work, dirs_exist_ok=True)
        subprocess.run(
            "git init -q -b main && git add -A && "
            "git -c user.name=bench -c user.email=bench@localhost commit -qm s",
            shell=True, cwd=work, check=True)
        state.metadata["work"] = work
        return state
    return solve


@scorer(metrics=[accuracy()])
def verify_commands():
    async def score(state, target):
        task_dir, work = state.metadata["task"], state.metadata["work"]
        with open(os.path.join(task_dir, "task.toml"), "rb") as f:
            features = tomllib.load(f)["feature"]
        passed = [subprocess.run(f["verify"], shell=True, cwd=work, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).returncode == 0 for f in features]
        shutil.rmtree(work)
        return Score(value=CORRECT if all(passed) else INCORRECT)
    return score


@task
def sessions():
    samples = [Sample(input="session", id=i, metadata={"task": TASKS[i % len(TASKS)]})
               for i in range(SESSIONS)]
    return Task(dataset=samples, solver=scripted_acts(), scorer=verify_commands())
PY
}

bench_bounds() {
    local base="${1:?usage: bench.sh bounds BASE_BIN (a release build of an earlier commit)}"
    local suite="$root/suites/seed-replication" replicates="${GOLD_REPLICATES:-6}"
    local bin dir
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    echo "== bounds: $bin against $base (release, --jobs 1), $(id -un) on $(nproc) cores"
    local mode home
    for mode in none bwrap; do
        for home in "" 1024; do
            local name="gold-$mode-${home:-0}" old new same sessions
            HOME_KIB="$home" make_gold_suite "$suite" "$dir/$name" "$mode" "$replicates"
            if [[ "$mode" == bwrap && -z "$home" ]]; then
                "$bin" validate "$dir/$name" 2>/dev/null | grep -o "a command agent's work directory[^;]*" || true
            fi
            old=$(seconds "$base" run "$dir/$name" --quiet --jobs 1 --out "$dir/old-$name")
            new=$(seconds "$bin" run "$dir/$name" --quiet --jobs 1 --out "$dir/new-$name")
            sessions=$(($(wc -l <"$dir/new-$name/sessions.csv") - 1))
            cmp -s "$dir/old-$name/sessions.csv" "$dir/new-$name/sessions.csv" && same=yes || same=NO
            echo "gold agent, sandbox = \"$mode\", HOME growing by ${home:-0} KiB a session, $sessions sessions: before ${old}s, with the bounds ${new}s"
            awk -v o="$old" -v n="$new" -v s="$sessions" \
                'BEGIN { printf "  cost per session: %+.1f ms (with/before %.3f)\n", (n - o) * 1000 / s, n / o }'
            echo "  sessions.csv identical: $same"
        done
    done
}

# Runs a command; prints its wall seconds and the CPU seconds (user + system) of it and
# the children it waited for.
wall_and_cpu() {
    local report
    report="$(mktemp)"
    /usr/bin/time -f '%e %U %S' -o "$report" "$@" >/dev/null 2>&1 || true
    awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$report"
    rm -f "$report"
}

bench_trajectories() {
    local base="${1:?usage: bench.sh trajectories BASE_BIN [TRIALS...] (BASE_BIN: a release build from before trajectories)}"
    shift
    local sizes=("$@")
    [ ${#sizes[@]} -eq 0 ] && sizes=(1000 10000)
    local suite="$root/suites/seed-replication" bin dir
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    echo "== trajectories: $bin against $base (release, --jobs 1), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
    local old new same old_wall old_cpu new_wall new_cpu
    # Wall time, and the CPU time of the harness and every process it waited for (git,
    # the checks), which a busy machine disturbs less.
    old=$(wall_and_cpu "$base" run "$suite" --quiet --jobs 1 --out "$dir/old")
    new=$(wall_and_cpu "$bin" run "$suite" --quiet --jobs 1 --out "$dir/new")
    cmp -s "$dir/old/sessions.csv" "$dir/new/sessions.csv" && same=yes || same=NO
    read -r old_wall old_cpu <<<"$old"
    read -r new_wall new_cpu <<<"$new"
    echo "the default suite: before ${old_wall}s (CPU ${old_cpu}s), recording trajectories ${new_wall}s (CPU ${new_cpu}s)"
    awk -v o="$old_wall" -v n="$new_wall" -v oc="$old_cpu" -v nc="$new_cpu" \
        'BEGIN { printf "  time added: %+.1f%% wall, %+.1f%% CPU\n", (n / o - 1) * 100, (nc / oc - 1) * 100 }'
    echo "  sessions.csv identical: $same; trajectories.jsonl $(du -sk "$dir/new/trajectories.jsonl" | cut -f1) KiB"
    rm -rf "$dir/old" "$dir/new"
    # The ratio is each size's peak over the first size's (the issue's figure: 10,000
    # trials within 1.2x of 1,000).
    printf '%8s %9s %14s %16s %11s\n' trials sessions "peak RSS KiB" "trajectories KiB" "x first"
    local n first=""
    for n in "${sizes[@]}"; do
        # The json arm over both tasks: two trials a replicate.
        local reps=$(((n + 1) / 2)) out="$dir/run$n" peak
        peak=$(peak_kib "$bin" run "$suite" --arms json --replicates "$reps" --quiet --out "$out")
        [ -n "$first" ] || first="$peak"
        printf '%8s %9s %14s %16s %11s\n' "$(wc -l <"$out/trials.jsonl")" "$(wc -l <"$out/sessions.jsonl")" \
            "$peak" "$(du -sk "$out/trajectories.jsonl" | cut -f1)" \
            "$(awk -v p="$peak" -v f="$first" 'BEGIN { printf "%.2f", p / f }')"
        rm -rf "$out"
    done
}

# The sh task of bench_container in DIR/bwrap/task and, with an image, in
# DIR/container/task, each in a suite of the careful sim agent whose checks run under
# bubblewrap or in containers.
make_container_suites() {
    local dir="$1" replicates="$2" engine="$3" nonce="$4" kind
    for kind in bwrap container; do
        local suite="$dir/$kind" task="$dir/$kind/task"
        mkdir -p "$task/repo/src" "$task/repo/tests" "$task/oracle/tests"
        echo "source goes here" >"$task/repo/src/README"
        {
            echo 'name = "shtask"'
            echo 'goal = "three files"'
            echo "tests = { glob = \"tests/**/*.sh\", count_pattern = '^# test' }"
        } >"$task/task.toml"
        for n in 1 2 3; do
            printf '# test: f%s exists\ntest -f src/f%s.txt\n' "$n" "$n" >"$task/repo/tests/check_F$n.sh"
            cp "$task/repo/tests/check_F$n.sh" "$task/oracle/tests/"
            mkdir -p "$task/oracle/gold/F$n/src"
            echo "f$n" >"$task/oracle/gold/F$n/src/f$n.txt"
            printf '\n[[feature]]\nid = "F%s"\ndescription = "file %s exists"\nverify = "sh tests/check_F%s.sh"\n' \
                "$n" "$n" "$n" >>"$task/task.toml"
        done
        if [ "$kind" = container ]; then
            mkdir -p "$task/environment"
            # A label of this invocation's: a context never built before, so that the
            # first step shows the build and the later ones show none.
            printf 'FROM ubuntu:24.04\nWORKDIR /app\nLABEL loopbench.bench=%s\n' "$nonce" \
                >"$task/environment/Dockerfile"
            printf '\n[environment]\ndockerfile = "environment/Dockerfile"\n' >>"$task/task.toml"
        fi
        {
            echo "name = \"bench-$kind\""
            echo 'seed = 7'
            echo "replicates = $replicates"
            echo 'tasks = ["task"]'
            echo "verify_sandbox = \"$kind\""
            [ "$kind" = container ] && echo "engine = \"$engine\""
            printf '\n[agents.sim]\ndriver = "sim"\nprofile = "careful"\n\n[[arm]]\nname = "json"\nagent = "sim"\nlist_format = "json"\nmax_sessions = 6\n'
        } >"$suite/suite.toml"
    done
}

bench_container() {
    local engine="${1:-podman}" bin dir
    "$engine" info >/dev/null 2>&1 || { echo "container: $engine does not answer info" >&2; return 2; }
    bin="$(release_bin)"
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' RETURN
    local nonce="$$-$(date +%s%N)"
    make_container_suites "$dir" "${CONTAINER_REPLICATES:-2}" "$engine" "$nonce"
    images() { "$engine" images --filter reference=loopbench-task --format '{{.ID}}' | sort -u | wc -l; }
    local before after t checks sessions
    declare -A per_check per_session
    echo "== container against bubblewrap ($engine; $("$bin" --version))"
    for kind in bwrap container second-container; do
        local task_kind="${kind#second-}"
        before=$(images)
        t=$(seconds "$bin" check-task "$dir/$task_kind/task" --format json --quiet --jobs 1 \
            --sandbox "$task_kind" --repeats 1)
        after=$(images)
        # nop, oracle (1 + 2 + 3) and alone (3) trees: 3 + 6 + 3 checks.
        checks=12
        per_check[$kind]=$(awk -v t="$t" -v n="$checks" 'BEGIN { printf "%.3f", t / n }')
        echo "check-task under $kind: ${t}s, ${per_check[$kind]}s a check; images built: $((after - before))"
    done
    for kind in bwrap container; do
        before=$(images)
        rm -rf "$dir/out-$kind"
        t=$(seconds "$bin" run "$dir/$kind" --out "$dir/out-$kind" --jobs 1 --quiet)
        after=$(images)
        sessions=$(($(wc -l <"$dir/out-$kind/sessions.csv") - 1))
        per_session[$kind]=$(awk -v t="$t" -v n="$sessions" 'BEGIN { printf "%.3f", t / n }')
        echo "run with checks under $kind: ${t}s, $sessions sessions, ${per_session[$kind]}s a session; images built: $((after - before))"
    done
    awk -v c="${per_check[container]}" -v b="${per_check[bwrap]}" \
        'BEGIN { printf "a check: container / bubblewrap = %.1fx\n", c / b }'
    awk -v c="${per_session[container]}" -v b="${per_session[bwrap]}" \
        'BEGIN { printf "a session (its checks included): container / bubblewrap = %.1fx\n", c / b }'
    local same=yes
    cmp -s <(cut -d, -f1-40 "$dir/out-bwrap/sessions.csv") <(cut -d, -f1-40 "$dir/out-container/sessions.csv") || same=NO
    echo "sessions.csv identical under both (first 40 columns): $same"
    # The image of this invocation's context goes with it.
    "$engine" images --quiet --filter "label=loopbench.bench=$nonce" | sort -u |
        xargs -r "$engine" rmi --force >/dev/null 2>&1 || true
}

case "${1:-}" in
run) shift; bench_run "$@" ;;
container) shift; bench_container "$@" ;;
processes) shift; bench_processes "$@" ;;
trajectories) shift; bench_trajectories "$@" ;;
bounds) shift; bench_bounds "$@" ;;
check-task) shift; bench_check_task "$@" ;;
weekly) shift; bench_weekly "$@" ;;
html) shift; bench_html "$@" ;;
report) shift; bench_report "$@" ;;
memory) shift; bench_memory "$@" ;;
effects) shift; bench_effects "$@" ;;
sandbox) shift; bench_sandbox "$@" ;;
network) shift; bench_network "$@" ;;
replay) shift; bench_replay "$@" ;;
*)
    echo "usage: $0 run [SUITE] | processes BASE_BIN | trajectories BASE_BIN [TRIALS...] | report [ROWS [BIN]] | replay [TRACES] | html [TRIALS] | memory [SIZES] | effects [MIB] | weekly [RUNS [BIN]] | sandbox [SUITE] | network [BIN] | bounds BASE_BIN | check-task [INPUT...] | container [ENGINE]" >&2
    exit 2
    ;;
esac
