#!/bin/sh
# Tests for `invoicer export FILE TODAY`: a CSV of every invoice with its late fee,
#   number,amount_cents,late_fee_cents,total_cents
# Run from the repository root: sh tests/test_export.sh
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
    'INV-003,Acme,7525,2024-02-14,no' \
    'INV-004,Initech,7525,2024-02-13,no' > "$tmp/invoices.csv"
run export "$tmp/invoices.csv" 2024-03-15

# test: starts with the header line
lines number,; check "header" "number,amount_cents,late_fee_cents,total_cents" "$got"

# test: an invoice more than 30 days late carries its fee and the total in cents
lines INV-004,; check "late row" "INV-004,7525,151,7676" "$got"

# test: every invoice appears once, in file order; paid and recent ones with fee 0
check "whole export" "0:number,amount_cents,late_fee_cents,total_cents
INV-001,12000,240,12240
INV-002,5050,0,5050
INV-003,7525,0,7525
INV-004,7525,151,7676" "$st:$out"

exit $((fail > 0))
