#!/bin/sh
# Tests for `invoicer overdue FILE TODAY`: numbers of the unpaid invoices past due.
# Run from the repository root: sh tests/test_overdue.sh
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
    'INV-005,Initech,2500,2024-12-01,no' \
    'INV-006,Umbrella,800,2023-12-31,no' > "$tmp/invoices.csv"
run overdue "$tmp/invoices.csv" 2024-03-15

# test: lists the unpaid invoices past their due date, one per line, in file order
check "unpaid and past due" "0:INV-001
INV-004
INV-006" "$st:$out"

# test: paid invoices and invoices due today or later are not overdue
lines INV-002; a=$got; lines INV-003; b=$got; lines INV-005
check "no paid, due-today or future invoice" "" "$a$b$got"

# test: an invoice due today is overdue the next day
run overdue "$tmp/invoices.csv" 2024-03-16
lines INV-003; check "due yesterday" "INV-003" "$got"

exit $((fail > 0))
