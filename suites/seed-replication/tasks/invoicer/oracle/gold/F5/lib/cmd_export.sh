# invoicer export FILE TODAY
# Prints a CSV of every invoice with its late fee on TODAY:
#   number,amount_cents,late_fee_cents,total_cents
. "$LIB/fees.sh"

cmd_export() {
    [ $# -eq 2 ] || usage "export FILE TODAY"
    need_file "$1"
    need_date "$2"
    awk -F, -v today="$2" "$DATES_AWK$FEES_AWK"'
        BEGIN { print "number,amount_cents,late_fee_cents,total_cents" }
        NR > 1 {
            fee = late_fee($3, $4, $5, today)
            printf "%s,%d,%d,%d\n", $1, $3, fee, $3 + fee
        }
    ' "$1"
}

cmd_export "$@"
