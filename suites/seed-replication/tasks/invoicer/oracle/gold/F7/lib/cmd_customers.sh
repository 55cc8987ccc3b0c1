# invoicer customers FILE
# Prints each customer once, sorted by name, with the total of their unpaid invoices:
# "NAME<TAB>TOTAL" (TOTAL as units.cents; 0.00 when all their invoices are paid).
. "$LIB/money.sh"

cmd_customers() {
    [ $# -eq 1 ] || usage "customers FILE"
    need_file "$1"
    awk -F, "$MONEY_AWK"'
        NR > 1 { owed[$2] += ($5 == "no") ? $3 : 0 }
        END { for (c in owed) printf "%s\t%s\n", c, fmt_cents(owed[c]) }
    ' "$1" | sort
}

cmd_customers "$@"
