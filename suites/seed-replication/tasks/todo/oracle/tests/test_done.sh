#!/bin/sh
# Tests for `todo done N`: checks off item N and prints "done N: TEXT".
# Run from the repository root: sh tests/test_done.sh
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

store '[ ] buy milk' '[ ] call mom' '[ ] (A) pay rent'
run done 3
slurp "$TODO_FILE"

# test: prints the item checked off, with its priority
check "message" "0:done 3: (A) pay rent" "$st:$out"

# test: checks off only that item, keeping its priority
check "store" "[ ] buy milk
[ ] call mom
[x] (A) pay rent" "$got"

# test: an item that does not exist is an error (exit 1), the store is unchanged
run done 7
slurp "$TODO_FILE"
check "no item 7" "1:todo: no item 7|[ ] buy milk
[ ] call mom
[x] (A) pay rent" "$st:$out|$got"

exit $((fail > 0))
