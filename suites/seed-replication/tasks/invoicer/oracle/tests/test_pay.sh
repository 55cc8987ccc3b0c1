#!/bin/sh
# Tests for `invoicer pay FILE NUMBER`: prints the file with one invoice marked paid.
# Run from the repository root: sh tests/test_pay.sh
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
    'INV-003,Acme,7505,2024-03-15,no' > "$tmp/invoices.csv"
run pay "$tmp/invoices.csv" INV-003

# test: prints the whole file with only that invoice marked paid
check "INV-003 marked paid" "0:number,customer,amount_cents,due_date,paid
INV-001,Acme,12000,2024-01-10,no
INV-002,Globex,5050,2024-01-10,yes
INV-003,Acme,7505,2024-03-15,yes" "$st:$out"

# test: leaves the invoice file itself unchanged
slurp "$tmp/invoices.csv"
check "file unchanged" "number,customer,amount_cents,due_date,paid
INV-001,Acme,12000,2024-01-10,no
INV-002,Globex,5050,2024-01-10,yes
INV-003,Acme,7505,2024-03-15,no" "$got"

# test: an unknown invoice number fails with exit 1 and a message, printing no file
run pay "$tmp/invoices.csv" INV-404
check "unknown invoice" "1:invoicer: no invoice INV-404" "$st:$out"

exit $((fail > 0))
