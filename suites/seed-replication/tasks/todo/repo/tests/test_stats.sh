#!/bin/sh
# Tests for `todo stats`: counts of items, done (with percentage), open, and open
# items per priority.
# Run from the repository root: sh tests/test_stats.sh
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# check NAME EXPECTED ACTUAL: records a failure of case NAME when ACTUAL != EXPECTED
check() {
    [ "$2" = "$3" ] && return 0
    printf 'FAIL: %s\n--- expected:\n%s\n--- actual:\n%s\n' "$1" "$2" "$3" >&2
    fail=$((fail + 1))
}

# slurp FILE: sets $got to the content of FILE without its last newline
slurp() {
    got='<no such file>'
    [ -f "$1" ] || return 0
    got= nl=
    while IFS= read -r l; do got=$got$nl$l; nl='
'; done < "$1"
}

# lines PREFIX: sets $got to the lines of $out that start with PREFIX
lines() {
    got= nl= old_ifs=$IFS
    IFS='
'
    set -f
    for l in $out; do
        case $l in "$1"*) got=$got$nl$l; nl='
' ;; esac
    done
    set +f
    IFS=$old_ifs
}

# run ARGS...: runs `todo ARGS...`; sets $out (stdout and stderr) and $st (status)
run() {
    sh bin/todo "$@" > "$tmp/out" 2>&1
    st=$?
    slurp "$tmp/out"
    out=$got
}

# store LINE...: replaces the store with these lines
store() { printf '%s\n' "$@" > "$TODO_FILE"; }

TODO_FILE=$tmp/todo.txt
export TODO_FILE

store '[x] (A) a' '[ ] (A) b' '[x] c' '[x] (B) d' '[ ] (C) e' '[x] f'
run stats

# test: counts all, done and open items; the percentage is rounded (4 of 6: 67%)
lines 'items:'; a=$got; lines 'done:'; b=$got; lines 'open:'
check "counts" "items: 6|done: 4 (67%)|open: 2" "$a|$b|$got"

# test: counts the open items per priority (done items do not count)
check "whole output" "0:items: 6
done: 4 (67%)
open: 2
priority A: 1
priority B: 0
priority C: 1" "$st:$out"

# test: a missing store counts as empty
TODO_FILE=$tmp/missing.txt
run stats
check "empty" "0:items: 0
done: 0 (0%)
open: 0
priority A: 0
priority B: 0
priority C: 0" "$st:$out"

exit $((fail > 0))
