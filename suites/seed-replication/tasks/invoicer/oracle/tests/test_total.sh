#!/bin/sh
# Tests for `invoicer total FILE`: the sum of the unpaid amounts, as units.cents.
# Run from the repository root: sh tests/test_total.sh
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
    'INV-002,Globex,5050,2024-02-20,yes' \
    'INV-003,Acme,7505,2024-03-20,no' \
    'INV-004,Initech,5,2024-01-31,no' > "$tmp/invoices.csv"
run total "$tmp/invoices.csv"

# test: sums the amounts of the unpaid invoices only
check "sum of unpaid invoices" "0:195.10" "$st:$out"

# test: prints 0.00 when nothing is unpaid
printf '%s\n' 'number,customer,amount_cents,due_date,paid' \
    'INV-001,Acme,500,2024-01-01,yes' > "$tmp/paid.csv"
run total "$tmp/paid.csv"
check "all paid gives 0.00" "0:0.00" "$st:$out"

exit $((fail > 0))
