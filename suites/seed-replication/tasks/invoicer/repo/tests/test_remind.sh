#!/bin/sh
# Tests for `invoicer remind FILE TODAY`: one reminder per overdue invoice, sent with
# bin/send_reminder (which logs "reminder:NUMBER" to $LOOPBENCH_EFFECTS).
# Run from the repository root: sh tests/test_remind.sh
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

# run ARGS...: runs `invoicer ARGS...`; sets $out (stdout and stderr) and $st (status)
run() {
    sh bin/invoicer "$@" > "$tmp/out" 2>&1
    st=$?
    slurp "$tmp/out"
    out=$got
}

printf '%s\n' 'number,customer,amount_cents,due_date,paid' \
    'INV-001,Acme,12000,2024-01-10,no' \
    'INV-002,Globex,5050,2024-01-10,yes' \
    'INV-003,Acme,7505,2024-03-15,no' \
    'INV-004,Initech,99,2024-03-14,no' \
    'INV-005,Initech,2500,2024-12-01,no' > "$tmp/invoices.csv"
LOOPBENCH_EFFECTS=$tmp/effects.log
export LOOPBENCH_EFFECTS
run remind "$tmp/invoices.csv" 2024-03-15

# test: prints the number of each invoice it reminded
check "reminded invoices" "0:INV-001
INV-004" "$st:$out"

# test: each reminder went through bin/send_reminder, exactly once per overdue invoice
slurp "$tmp/effects.log"
check "effects log" "reminder:INV-001
reminder:INV-004" "$got"

exit $((fail > 0))
