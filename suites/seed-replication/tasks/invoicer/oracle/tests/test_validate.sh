#!/bin/sh
# Tests for `invoicer validate FILE`: "line N: REASON" for each malformed line and
# exit 1, or "ok: K invoices" and exit 0.
# Run from the repository root: sh tests/test_validate.sh
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

printf '%s\n' 'number,customer,amount,due_date,paid' \
    'INV-001,Acme,12000,2024-01-10,no' \
    'INV-002,Globex,50.50,2024-01-10,no' \
    'INV-003,Acme,3000,2024-02-30,yes' \
    'INV-004,Initech,700,2024-02-01,maybe' \
    'INV-005,Initech,700' \
    'INV-001,Acme,100,2024-01-01,no' \
    'INV-006,Acme,100,1900-02-29,no' > "$tmp/bad.csv"
run validate "$tmp/bad.csv"

# test: a wrong header is reported as line 1, and the status is 1
lines 'line 1:'; check "bad header" "1:line 1: bad header" "$st:$got"

# test: reports every malformed line with its number and reason (no leap day in 1900)
check "malformed lines" "line 1: bad header
line 3: bad amount_cents: 50.50
line 4: bad due_date: 2024-02-30
line 5: bad paid: maybe
line 6: expected 5 fields, got 3
line 7: duplicate number: INV-001
line 8: bad due_date: 1900-02-29" "$out"

# test: a well-formed file is ok (2024 and 2000 have a leap day)
printf '%s\n' 'number,customer,amount_cents,due_date,paid' \
    'INV-001,Acme,12000,2024-02-29,no' \
    'INV-002,Globex,0,2000-02-29,yes' > "$tmp/good.csv"
run validate "$tmp/good.csv"
check "good file" "0:ok: 2 invoices" "$st:$out"

exit $((fail > 0))
