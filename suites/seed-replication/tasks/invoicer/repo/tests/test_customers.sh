#!/bin/sh
# Tests for `invoicer customers FILE`: each customer once, sorted by name, with the
# total of their unpaid invoices, as "NAME<TAB>TOTAL".
# Run from the repository root: sh tests/test_customers.sh
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

tab='	'
printf '%s\n' 'number,customer,amount_cents,due_date,paid' \
    'INV-001,Globex,5050,2024-01-10,no' \
    'INV-002,Acme,12000,2024-01-10,no' \
    'INV-003,Acme Corp,999,2024-02-01,no' \
    'INV-004,Acme,3000,2024-02-01,yes' \
    'INV-005,Initech,700,2024-02-01,yes' \
    'INV-006,Acme,25,2024-03-01,no' > "$tmp/invoices.csv"
run customers "$tmp/invoices.csv"

# test: adds up the unpaid invoices of each customer; a paid-up customer shows 0.00
lines "Acme$tab"; check "Acme" "Acme${tab}120.25" "$got"
lines "Initech$tab"; check "Initech" "Initech${tab}0.00" "$got"

# test: lists each customer exactly once, sorted by name
check "whole list" "0:Acme${tab}120.25
Acme Corp${tab}9.99
Globex${tab}50.50
Initech${tab}0.00" "$st:$out"

exit $((fail > 0))
