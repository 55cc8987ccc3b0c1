#!/bin/sh
# check.sh — checks loopbench task drafts (task.toml, repo/, oracle/tests, oracle/gold).
#
#   dash check.sh [TASK_DIR...]        (default: the invoicer and todo tasks next to it)
#
# Static checks, then:
#   (a) every verify fails on a fresh copy of repo/
#   (b) fresh copy + gold of the feature's transitive deps + its own gold -> verify passes
#       (applied in two orders); deps' gold alone -> verify fails
#   (c) all gold applied (forward and reverse order) -> every verify passes, twice
#   (d) all gold but feature X -> X fails, and every feature not depending on X passes
#   (e) all gold, one gold file truncated to its first half of lines -> its feature fails
#   (f) oracle/tests is byte-identical to repo/tests
#   (g) each verify takes < 30 ms with all gold: CPU time (perf stat, mean of 5) when perf
#       is present, else wall time (mean of 5); wall time over 30 ms is then a warning.
#       Also shown: the first run's wall time and the processes it starts (strace)
#   (h) verify never changes the work copy (file list + checksums before/after), leaves
#       nothing in $TMPDIR and writes nothing to the real $LOOPBENCH_EFFECTS
#   (i) everything runs under dash: this script, and verify as `dash -c "$verify"`,
#       with /bin/sh -> dash checked; `dash -n` on every shell file
# Exit status 0 when everything holds, 1 otherwise.
set -u
LC_ALL=C
export LC_ALL

case $0 in
    */*) here=$(cd "${0%/*}" && pwd) ;;
    *) here=$(pwd) ;;
esac
[ $# -gt 0 ] || set -- "$here/invoicer" "$here/todo"

work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
TMPDIR=$work/tmp
LOOPBENCH_EFFECTS=$work/effects.log
: > "$LOOPBENCH_EFFECTS"
export TMPDIR LOOPBENCH_EFFECTS
unset TODO_FILE 2>/dev/null || true

problems=0
checks=0
warnings=0
ok() { checks=$((checks + 1)); [ -n "${VERBOSE:-}" ] && printf '    ok   %s\n' "$*"; return 0; }
bad() { checks=$((checks + 1)); problems=$((problems + 1)); printf '    FAIL %s\n' "$*"; }
section() { printf '  %s\n' "$*"; }

# ---- (i) the shell -------------------------------------------------------------------
shell_line() {
    sh_target=$(readlink -f /bin/sh)
    printf 'shell: /bin/sh -> %s; this script runs under: %s\n' "$sh_target" \
        "$(readlink -f /proc/$$/exe 2>/dev/null || echo unknown)"
    case $sh_target in
        */dash) ;;
        *) echo "FAIL /bin/sh is not dash"; problems=$((problems + 1)) ;;
    esac
}

# ---- task.toml ---------------------------------------------------------------------------
# parse_toml FILE: prints one line per feature, "ID|DEP DEP...|VERIFY", and on stderr
# "KEYERR ..." lines for unknown, missing or duplicated keys
parse_toml() {
    awk '
        function val(s) { sub(/^[^=]*= */, "", s); if (s ~ /^"/) { sub(/^"/, "", s); sub(/" *$/, "", s) }; return s }
        function emit() {
            split("id category description steps verify depends_on", req, " ")
            for (k = 1; k <= 6; k++) if (!(req[k] in have)) print "KEYERR feature " id ": missing " req[k] > "/dev/stderr"
            print id "|" deps "|" verify
        }
        /^[ \t]*(#|$)/ { next }
        /^\[\[feature\]\]/ {
            if (infeat) emit()
            infeat = 1; id = ""; deps = ""; verify = ""; split("", have); next
        }
        /^\[/ { print "KEYERR unknown table " $0 > "/dev/stderr"; next }
        {
            key = $0; sub(/[ \t]*=.*$/, "", key)
            if (!infeat) {
                if (key !~ /^(name|goal|tests|verify_timeout|side_effect_tools)$/) print "KEYERR unknown top-level key " key > "/dev/stderr"
                if (key in top) print "KEYERR duplicate key " key > "/dev/stderr"
                top[key] = 1
                next
            }
            if (key !~ /^(id|category|description|steps|verify|depends_on)$/) print "KEYERR feature " id ": unknown key " key > "/dev/stderr"
            if (key in have) print "KEYERR feature " id ": duplicate key " key > "/dev/stderr"
            have[key] = 1
            if (key == "id") id = val($0)
            if (key == "verify") verify = val($0)
            if (key == "depends_on") {
                s = $0; sub(/^[^[]*\[/, "", s); sub(/\][^]]*$/, "", s); gsub(/[", \t]+/, " ", s)
                sub(/^ /, "", s); sub(/ $/, "", s); deps = s
            }
        }
        END {
            if (infeat) emit()
            split("name goal tests", req, " ")
            for (k = 1; k <= 3; k++) if (!(req[k] in top)) print "KEYERR missing top-level key " req[k] > "/dev/stderr"
        }
    ' "$1"
}

getdeps() { eval "printf '%s' \"\${deps_$1}\""; }
getverify() { eval "printf '%s' \"\${verify_$1}\""; }

# closure ID: sets $clo to the transitive dependencies of ID (each once, in list order,
# which puts dependencies first) and $cycle to 1 when ID is among them
closure() {
    _set=" $(getdeps "$1") "
    _changed=1
    while [ -n "$_changed" ]; do
        _changed=
        for _d in $_set; do
            for _e in $(getdeps "$_d"); do
                case $_set in *" $_e "*) ;; *) _set="$_set$_e "; _changed=1 ;; esac
            done
        done
    done
    clo=
    for _i in $ids; do
        case $_set in *" $_i "*) [ "$_i" = "$1" ] || clo="${clo:+$clo }$_i" ;; esac
    done
    case $_set in *" $1 "*) cycle=1 ;; esac
}

# depends_on_x Y X: true when Y depends on X, transitively
depends_on_x() { closure "$1"; case " $clo " in *" $2 "*) return 0 ;; esac; return 1; }

# ---- work copies -------------------------------------------------------------------------
n_copy=0
# fresh_copy: sets $w to a new copy of repo/
fresh_copy() {
    n_copy=$((n_copy + 1))
    w=$work/w$n_copy
    mkdir "$w" && cp -R "$task/repo/." "$w/"
}
gold() { for _g in "$@"; do cp -R "$task/oracle/gold/$_g/." "$w/"; done; }
snapshot() { (cd "$w" && find . -print | sort && find . -type f -exec cksum {} + | sort); }

# verify ID: runs the feature's verify in $w with dash; returns its exit status and
# records (h) problems
verify() {
    _v=$(getverify "$1")
    snapshot > "$work/before"
    (cd "$w" && timeout 20 dash -c "$_v") > "$work/out" 2>&1
    _rc=$?
    snapshot > "$work/after"
    if ! cmp -s "$work/before" "$work/after"; then
        bad "(h) $1 '$_v' changed the work copy: $(diff "$work/before" "$work/after" | head -5 | tr '\n' ' ')"
    fi
    if [ -n "$(ls -A "$TMPDIR")" ]; then
        bad "(h) $1 '$_v' left files in TMPDIR: $(ls -A "$TMPDIR" | tr '\n' ' ')"
        rm -rf "$TMPDIR"/* "$TMPDIR"/.[!.]* 2>/dev/null
    fi
    if [ -s "$LOOPBENCH_EFFECTS" ]; then
        bad "(h) $1 wrote to the real \$LOOPBENCH_EFFECTS"
        : > "$LOOPBENCH_EFFECTS"
    fi
    return $_rc
}
expect_pass() { # LABEL ID
    if verify "$2"; then ok "$1: $2 passes"; else bad "$1: $2 should pass: $(head -c 300 "$work/out" | tr '\n' ' ')"; fi
}
expect_fail() { # LABEL ID
    if verify "$2"; then bad "$1: $2 should fail but passes"; else ok "$1: $2 fails"; fi
}
now_us() { _t=$(date +%s%N); echo $((_t / 1000)); }

# ---- one task ----------------------------------------------------------------------------
check_task() {
    task=$1
    name=${task##*/}
    printf '\n== task %s (%s)\n' "$name" "$task"
    errs=$(parse_toml "$task/task.toml" 2>&1 >/dev/null)
    parse_toml "$task/task.toml" 2>/dev/null > "$work/features"
    ids=
    edges=0
    while IFS='|' read -r id deps v; do
        ids="${ids:+$ids }$id"
        eval "deps_$id=\$deps"
        eval "verify_$id=\$v"
        set -- $deps
        edges=$((edges + $#))
    done < "$work/features"
    set -- $ids
    nfeat=$#

    section "static"
    if [ -n "$errs" ]; then bad "task.toml keys: $errs"; else ok "task.toml keys"; fi
    if [ "$nfeat" -ge 8 ] && [ "$nfeat" -le 10 ]; then ok "$nfeat features"; else bad "$nfeat features (want 8-10)"; fi
    if [ "$edges" -ge 3 ]; then ok "$edges dependency edges"; else bad "$edges dependency edges (want >= 3)"; fi
    seen=
    for id in $ids; do
        for d in $(getdeps "$id"); do
            case " $seen " in *" $d "*) ;; *) bad "$id depends on $d, which is not listed before it" ;; esac
        done
        seen="$seen $id"
        cycle=
        closure "$id"
        [ -z "$cycle" ] || bad "dependency cycle through $id"
    done
    ok "dependency order and no cycles"

    # tests: one file per feature, 2-4 cases each
    ntests=$(find "$task/repo/tests" -type f -name '*.sh' | wc -l)
    [ "$ntests" -eq "$nfeat" ] && ok "$ntests test files" || bad "$ntests test files for $nfeat features"
    for id in $ids; do
        v=$(getverify "$id")
        case $v in
            "sh tests/test_"*.sh) f=${v#sh } ;;
            *) bad "$id verify is not 'sh tests/test_<name>.sh': $v"; continue ;;
        esac
        if [ ! -f "$task/repo/$f" ]; then bad "$id: no $f"; continue; fi
        c=$(grep -c '^# test:' "$task/repo/$f")
        if [ "$c" -ge 2 ] && [ "$c" -le 4 ]; then ok "$f: $c cases"; else bad "$f: $c cases (want 2-4)"; fi
    done

    # gold: disjoint paths, none overwriting repo files
    (cd "$task/oracle/gold" && find . -type f | sed 's|^\./[^/]*/||' | sort | uniq -d) > "$work/dups"
    [ -s "$work/dups" ] && bad "gold paths in more than one feature: $(tr '\n' ' ' < "$work/dups")" || ok "gold paths disjoint"
    for id in $ids; do
        [ -d "$task/oracle/gold/$id" ] || { bad "no oracle/gold/$id"; continue; }
        (cd "$task/oracle/gold/$id" && find . -type f) | while read -r p; do
            [ ! -e "$task/repo/$p" ] || echo "gold/$id/$p overwrites a repo file"
        done
    done > "$work/over"
    [ -s "$work/over" ] && bad "$(tr '\n' ' ' < "$work/over")" || ok "gold adds files only"
    for g in "$task"/oracle/gold/*; do
        case " $ids " in *" ${g##*/} "*) ;; *) bad "oracle/gold/${g##*/} is not a feature" ;; esac
    done

    # (f)
    if diff -r "$task/oracle/tests" "$task/repo/tests" > /dev/null; then ok "(f) oracle/tests == repo/tests"; else bad "(f) oracle/tests differs from repo/tests"; fi

    # executables, syntax, bashisms, forbidden tools
    for b in "$task"/repo/bin/*; do
        [ -x "$b" ] && ok "${b#$task/} executable" || bad "${b#$task/} is not executable"
    done
    find "$task/repo" "$task/oracle" -type f \( -name '*.sh' -o -path '*/bin/*' \) > "$work/shfiles"
    while read -r f; do
        dash -n "$f" 2> "$work/err" || bad "dash -n ${f#$task/}: $(cat "$work/err")"
    done < "$work/shfiles"
    ok "dash -n on $(wc -l < "$work/shfiles") shell files"
    hits=$(xargs grep -nE '\[\[|<<<|^[[:space:]]*(source|local|declare|typeset|pushd|popd) |echo -e|\$'"'"'|\$\{[A-Za-z_]+:[0-9]|\$RANDOM|\$\{[A-Za-z_]+/|&>' < "$work/shfiles")
    [ -z "$hits" ] && ok "no bashisms found" || bad "bashisms: $hits"
    hits=$(xargs grep -nE '\$\(date|`date|(^|[;&|] *)date( |$)|python|curl|wget' < "$work/shfiles")
    [ -z "$hits" ] && ok "no date/python/network" || bad "forbidden tools: $hits"

    # (a)
    section "(a) fresh repo: every verify fails"
    fresh_copy
    for id in $ids; do expect_fail "(a)" "$id"; done

    # (b)
    section "(b) deps + own gold: passes (two orders); deps alone: fails"
    for id in $ids; do
        closure "$id"
        fresh_copy; gold $clo "$id"; expect_pass "(b) [$clo] + $id" "$id"
        rev=; for d in $clo; do rev="$d $rev"; done
        fresh_copy; gold "$id" $rev; expect_pass "(b) $id + [$rev]" "$id"
        fresh_copy; gold $clo; expect_fail "(b) [$clo] only" "$id"
    done

    # (c)
    section "(c) all gold: every verify passes"
    fresh_copy; gold $ids
    all_w=$w
    for id in $ids; do expect_pass "(c) all gold" "$id"; expect_pass "(c) all gold, again" "$id"; done
    rev=; for d in $ids; do rev="$d $rev"; done
    fresh_copy; gold $rev
    for id in $ids; do expect_pass "(c) all gold, reverse order" "$id"; done

    # (d)
    section "(d) all gold but X: X fails, features not depending on X pass"
    for x in $ids; do
        fresh_copy
        for id in $ids; do [ "$id" = "$x" ] || gold "$id"; done
        expect_fail "(d) without $x" "$x"
        for id in $ids; do
            [ "$id" = "$x" ] && continue
            if depends_on_x "$id" "$x"; then continue; fi
            expect_pass "(d) without $x" "$id"
        done
    done

    # (e)
    section "(e) one gold file cut to its first half: its feature fails"
    for id in $ids; do
        for f in $(cd "$task/oracle/gold/$id" && find . -type f | sed 's|^\./||' | sort); do
            fresh_copy; gold $ids
            n=$(wc -l < "$task/oracle/gold/$id/$f")
            head -n $((n / 2)) "$task/oracle/gold/$id/$f" > "$w/$f"
            if verify "$id"; then
                bad "(e) $id with $f cut to $((n / 2)) of $n lines still passes"
            else
                ok "(e) $id fails with $f cut to $((n / 2))/$n lines"
                printf '    %-4s %-26s cut to %2d/%2d lines -> fails\n' "$id" "$f" $((n / 2)) "$n"
            fi
        done
    done

    # (g)
    section "(g) verify with all gold: processes started, time of the first run and mean of 5 (limit 30 ms)"
    w=$all_w
    for id in $ids; do
        v=$(getverify "$id")
        procs=?
        if command -v strace > /dev/null 2>&1; then
            (cd "$w" && strace -f -qq -e trace=execve,clone,clone3,fork,vfork -o "$work/strace" dash -c "$v") > /dev/null 2>&1
            forks=$(grep -cE '(clone|clone3|fork|vfork)\(' "$work/strace")
            execs=$(grep -cE 'execve\(.*= 0$|execve resumed>.*= 0$' "$work/strace")
            procs="$forks forks, $((execs - 1)) execs"
        fi
        t0=$(now_us)
        (cd "$w" && dash -c "$v") > /dev/null 2>&1
        t1=$(now_us)
        first=$(( (t1 - t0 + 500) / 1000 ))
        t0=$(now_us)
        for r in 1 2 3 4 5; do (cd "$w" && dash -c "$v") > /dev/null 2>&1; done
        t1=$(now_us)
        mean=$(( (t1 - t0 + 2500) / 5000 ))
        cpu=?
        if command -v perf > /dev/null 2>&1; then
            cpu=$(cd "$w" && perf stat -r 5 -x, -e task-clock dash -c "$v" 2>&1 > /dev/null | awk -F, '$3 == "task-clock" { printf "%.1f", $1 }')
        fi
        printf '    %-4s %-31s %-20s wall: first %3d ms, mean of 5 %3d ms; cpu mean %s ms\n' "$id" "$v" "$procs" "$first" "$mean" "$cpu"
        # the limit applies to CPU time when perf can measure it (wall time on a busy
        # machine mostly measures the other processes); wall time over 30 ms is a warning
        if [ "$cpu" != "?" ] && [ -n "$cpu" ]; then
            if [ "${cpu%.*}" -lt 30 ]; then ok "(g) $id cpu $cpu ms"; else bad "(g) $id uses $cpu ms of CPU"; fi
            [ "$mean" -lt 30 ] || { printf '    warn (g) %s wall mean %d ms >= 30 ms (load %s)\n' "$id" "$mean" "$(cut -d" " -f1 /proc/loadavg)"; warnings=$((warnings + 1)); }
        elif [ "$mean" -lt 30 ]; then ok "(g) $id ${mean}ms"; else bad "(g) $id mean of 5 runs ${mean} ms (first run ${first} ms)"; fi
    done
    rm -rf "$work"/w*
}

shell_line
t0=$(now_us); for r in 1 2 3 4 5 6 7 8 9 10; do dash -c :; done; t1=$(now_us)
printf "baseline: one process spawn (dash -c :) takes %d us here (mean of 10); load: %s\n" $(( (t1 - t0) / 10 )) "$(cut -d" " -f1-3 /proc/loadavg)"
for t in "$@"; do
    check_task "$t"
done
printf "\n%d checks, %d problems, %d warnings\n" "$checks" "$problems" "$warnings"
[ "$problems" -eq 0 ]
