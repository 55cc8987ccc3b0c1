#!/bin/sh
# Tests for `todo list [--open]`: "N [ ] text" per item, N being the item number.
# Run from the repository root: sh tests/test_list.sh
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

store '[ ] buy milk' '[x] call mom' '[ ] (A) pay rent'

# test: numbers every item, in store order
run list
check "all items" "0:1 [ ] buy milk
2 [x] call mom
3 [ ] (A) pay rent" "$st:$out"

# test: --open hides the done items and keeps the numbers of the others
run list --open
check "open items" "0:1 [ ] buy milk
3 [ ] (A) pay rent" "$st:$out"

# test: says "no items" when there is no store
TODO_FILE=$tmp/missing.txt
run list
check "missing store" "0:no items" "$st:$out"

exit $((fail > 0))
