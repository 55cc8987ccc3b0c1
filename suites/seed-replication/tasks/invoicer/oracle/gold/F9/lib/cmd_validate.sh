# invoicer validate FILE
# Checks every line of FILE. Prints "line N: REASON" for each malformed line and exits 1
# when there is any; otherwise prints "ok: K invoices". Reasons, first match wins:
#   bad header | expected 5 fields, got N | empty number | duplicate number: X
#   bad amount_cents: X | bad due_date: X (not a real calendar date) | bad paid: X
cmd_validate() {
    [ $# -eq 1 ] || usage "validate FILE"
    need_file "$1"
    awk -F, '
        function leap(y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }
        function valid_date(d,    y, m, dd, last) {
            if (d !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/) return 0
            y = substr(d, 1, 4) + 0; m = substr(d, 6, 2) + 0; dd = substr(d, 9, 2) + 0
            if (m < 1 || m > 12 || dd < 1) return 0
            last = substr("312831303130313130313031", 2 * m - 1, 2) + 0
            if (m == 2 && leap(y)) last = 29
            return dd <= last
        }
        function bad(line, why) { printf "line %d: %s\n", line, why; errors++ }
        NR == 1 {
            if ($0 != "number,customer,amount_cents,due_date,paid") bad(1, "bad header")
            next
        }
        NF != 5 { bad(NR, "expected 5 fields, got " NF); next }
        $1 == "" { bad(NR, "empty number"); next }
        $1 in seen { bad(NR, "duplicate number: " $1); next }
        { seen[$1] = 1 }
        $3 !~ /^[0-9]+$/ { bad(NR, "bad amount_cents: " $3); next }
        !valid_date($4) { bad(NR, "bad due_date: " $4); next }
        $5 != "yes" && $5 != "no" { bad(NR, "bad paid: " $5); next }
        { count++ }
        END {
            if (NR == 0) bad(1, "bad header")
            if (errors) exit 1
            printf "ok: %d invoices\n", count
        }
    ' "$1"
}

cmd_validate "$@"
