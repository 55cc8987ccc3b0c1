# invoicer statement FILE CUSTOMER TODAY
# One customer's invoices (exact name match) with their late fees on TODAY:
#   Statement for CUSTOMER as of TODAY
#   NUMBER DUE_DATE AMOUNT FEE paid|unpaid      one line per invoice, in file order
#   Amount due: TOTAL                           unpaid amounts plus their fees
# Fails with "invoicer: no invoices for CUSTOMER" (exit 1) when the customer has none.
. "$LIB/money.sh"
. "$LIB/fees.sh"

cmd_statement() {
    [ $# -eq 3 ] || usage "statement FILE CUSTOMER TODAY"
    need_file "$1"
    need_date "$3"
    customer=$2 awk -F, -v today="$3" "$DATES_AWK$MONEY_AWK$FEES_AWK"'
        BEGIN { customer = ENVIRON["customer"] }
        NR > 1 && $2 == customer {
            fee = late_fee($3, $4, $5, today)
            status = ($5 == "no") ? "unpaid" : "paid"
            if ($5 == "no") due += $3 + fee
            rows[++n] = $1 " " $4 " " fmt_cents($3) " " fmt_cents(fee) " " status
        }
        END {
            if (!n) {
                print "invoicer: no invoices for " customer > "/dev/stderr"
                exit 1
            }
            print "Statement for " customer " as of " today
            for (i = 1; i <= n; i++) print rows[i]
            print "Amount due: " fmt_cents(due + 0)
        }
    ' "$1"
}

cmd_statement "$@"
