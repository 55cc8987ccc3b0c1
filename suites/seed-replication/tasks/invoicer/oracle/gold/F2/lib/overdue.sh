# Overdue invoices: unpaid, and TODAY is after their due date.
. "$LIB/dates.sh"

# list_overdue FILE TODAY: prints the number of each overdue invoice, in file order
list_overdue() {
    awk -F, -v today="$2" "$DATES_AWK"'
        NR > 1 && $5 == "no" && days_late($4, today) > 0 { print $1 }
    ' "$1"
}
