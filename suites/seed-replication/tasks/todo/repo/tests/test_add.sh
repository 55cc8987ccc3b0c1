#!/bin/sh
# Tests for `todo add TEXT...`: appends "[ ] TEXT" to the store, prints "added N: TEXT".
# Run from the repository root: sh tests/test_add.sh
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

# test: the first item creates the store
run add buy milk
slurp "$TODO_FILE"
check "first item" "0:added 1: buy milk|[ ] buy milk" "$st:$out|$got"

# test: later items are appended and numbered after the existing ones, words joined
store '[ ] buy milk' '[x] call mom'
run add pay 'the rent'
slurp "$TODO_FILE"
check "appended" "0:added 3: pay the rent|[ ] buy milk
[x] call mom
[ ] pay the rent" "$st:$out|$got"

# test: an empty text is a usage error (exit 2) and leaves the store alone
store '[ ] buy milk'
run add '  '
slurp "$TODO_FILE"
check "empty text" "2:usage: todo add TEXT...|[ ] buy milk" "$st:$out|$got"

exit $((fail > 0))
