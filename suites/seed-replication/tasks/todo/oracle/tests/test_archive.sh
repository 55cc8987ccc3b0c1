#!/bin/sh
# Tests for `todo archive`: moves done items to the end of $TODO_FILE.done.
# Run from the repository root: sh tests/test_archive.sh
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

store '[ ] a' '[x] b' '[ ] c' '[ ] (A) d'
printf '%s\n' '[x] old' > "$TODO_FILE.done"
sh bin/todo done 4 > /dev/null 2>&1
run archive

# test: reports how many items were archived
check "message" "0:archived 2 items" "$st:$out"

# test: the store keeps only the open items, in order
slurp "$TODO_FILE"
check "store" "[ ] a
[ ] c" "$got"

# test: the done items, one checked off with `todo done`, go to the end of the archive
slurp "$TODO_FILE.done"
check "archive" "[x] old
[x] b
[x] (A) d" "$got"

exit $((fail > 0))
