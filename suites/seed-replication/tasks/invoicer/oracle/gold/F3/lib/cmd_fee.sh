# invoicer fee FILE TODAY
# Prints "NUMBER FEE" (FEE as units.cents) for each invoice that owes a late fee on
# TODAY, in file order.
. "$LIB/money.sh"
. "$LIB/fees.sh"

cmd_fee() {
    [ $# -eq 2 ] || usage "fee FILE TODAY"
    need_file "$1"
    need_date "$2"
    awk -F, -v today="$2" "$DATES_AWK$MONEY_AWK$FEES_AWK"'
        NR > 1 {
            fee = late_fee($3, $4, $5, today)
            if (fee > 0) print $1, fmt_cents(fee)
        }
    ' "$1"
}

cmd_fee "$@"
