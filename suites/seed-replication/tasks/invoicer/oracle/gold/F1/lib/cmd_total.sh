# invoicer total FILE
# Prints the sum of the amounts of the unpaid invoices in FILE, as units.cents.
. "$LIB/money.sh"

cmd_total() {
    [ $# -eq 1 ] || usage "total FILE"
    need_file "$1"
    awk -F, "$MONEY_AWK"'
        NR > 1 && $5 == "no" { sum += $3 }
        END { print fmt_cents(sum + 0) }
    ' "$1"
}

cmd_total "$@"
