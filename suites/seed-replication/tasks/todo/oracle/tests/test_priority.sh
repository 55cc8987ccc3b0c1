#!/bin/sh
# Tests for `todo priority N A|B|C`: writes "(A)" after the box of item N.
# Run from the repository root: sh tests/test_priority.sh
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

store '[ ] buy milk' '[x] (B) call mom' '[ ] pay rent'

# test: gives an item a priority
run priority 3 A
slurp "$TODO_FILE"
check "priority A" "0:priority 3: (A) pay rent|[ ] buy milk
[x] (B) call mom
[ ] (A) pay rent" "$st:$out|$got"

# test: replaces an older priority and keeps the done box
run priority 2 C
slurp "$TODO_FILE"
check "B becomes C" "0:priority 2: (C) call mom|[ ] buy milk
[x] (C) call mom
[ ] (A) pay rent" "$st:$out|$got"

# test: only A, B and C are priorities (usage error, exit 2)
run priority 1 D
check "priority D" "2:usage: todo priority N A|B|C" "$st:$out"

exit $((fail > 0))
