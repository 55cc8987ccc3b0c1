#!/bin/sh
# Tests for `invoicer statement FILE CUSTOMER TODAY`: one customer's invoices with
# their late fees, and the amount due (unpaid amounts plus fees).
# Run from the repository root: sh tests/test_statement.sh
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
    'INV-002,Globex,5050,2024-01-10,no' \
    'INV-003,Acme,3000,2024-01-01,yes' \
    'INV-004,Acme Corp,999,2024-01-01,no' \
    'INV-005,Acme,7525,2024-03-01,no' > "$tmp/invoices.csv"
run statement "$tmp/invoices.csv" Acme 2024-03-15

# test: the amount due adds the late fee to the unpaid amounts, and skips paid invoices
lines 'Amount due:'; check "amount due" "Amount due: 197.65" "$got"

# test: lists only that customer's invoices (not Acme Corp), paid ones included, with fees
check "whole statement" "0:Statement for Acme as of 2024-03-15
INV-001 2024-01-10 120.00 2.40 unpaid
INV-003 2024-01-01 30.00 0.00 paid
INV-005 2024-03-01 75.25 0.00 unpaid
Amount due: 197.65" "$st:$out"

# test: a customer without invoices is an error (exit 1)
run statement "$tmp/invoices.csv" Nobody 2024-03-15
check "unknown customer" "1:invoicer: no invoices for Nobody" "$st:$out"

exit $((fail > 0))
