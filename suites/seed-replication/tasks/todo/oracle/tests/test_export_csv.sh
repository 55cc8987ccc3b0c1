#!/bin/sh
# Tests for `todo export-csv`: CSV id,done,priority,text with RFC 4180 quoting.
# Run from the repository root: sh tests/test_export_csv.sh
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

store '[ ] buy milk' '[x] (B) call mom' '[ ] (A) milk, eggs' '[ ] say "hi"'
run export-csv

# test: starts with the header line
lines id,; check "header" "id,done,priority,text" "$got"

# test: done and priority get their own columns, the text loses box and priority
lines 2,; check "done item with priority" "2,yes,B,call mom" "$got"

# test: a text holding a comma or a double quote is quoted, its quotes doubled
check "whole export" '0:id,done,priority,text
1,no,,buy milk
2,yes,B,call mom
3,no,A,"milk, eggs"
4,no,,"say ""hi"""' "$st:$out"

exit $((fail > 0))
