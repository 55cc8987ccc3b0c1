#!/bin/sh
# Tests for `invoicer fee FILE TODAY`: a 2% late fee on invoices unpaid more than 30
# days after their due date, printed as "NUMBER FEE".
# Run from the repository root: sh tests/test_fee.sh
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

# TODAY is 2024-03-02; February 2024 has 29 days.
printf '%s\n' 'number,customer,amount_cents,due_date,paid' \
    'INV-001,Acme,12000,2024-01-10,no' \
    'INV-002,Globex,5050,2024-01-10,yes' \
    'INV-003,Acme,7525,2024-02-01,no' \
    'INV-004,Initech,7525,2024-01-31,no' \
    'INV-005,Initech,25,2023-12-01,no' \
    'INV-006,Umbrella,1000,2024-04-01,no' > "$tmp/invoices.csv"
run fee "$tmp/invoices.csv" 2024-03-02

# test: an unpaid invoice 52 days late owes 2% of its amount
lines 'INV-001 '; check "2% of 120.00" "INV-001 2.40" "$got"

# test: 31 days late owes a fee, exactly 30 days late does not (leap February counted)
lines 'INV-004 '; check "31 days late" "INV-004 1.51" "$got"
lines 'INV-003 '; check "30 days late" "" "$got"

# test: the fee is rounded half up to a cent (also across a year boundary)
lines 'INV-005 '; check "0.5 cent rounds up" "INV-005 0.01" "$got"

# test: only invoices that owe a fee are printed, in file order (paid or not due: none)
check "whole output" "0:INV-001 2.40
INV-004 1.51
INV-005 0.01" "$st:$out"

exit $((fail > 0))
