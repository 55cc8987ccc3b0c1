# Late fees: 2% of the amount, rounded half up to a cent, for an invoice that is still
# unpaid more than 30 days after its due date. FEES_AWK needs DATES_AWK in front of it.
. "$LIB/dates.sh"

FEES_AWK='
# late_fee(amount_cents, due, paid, today): the late fee in cents (0 when none is due)
function late_fee(amount, due, paid, today) {
    if (paid != "no") return 0
    if (days_late(due, today) <= 30) return 0
    return int((amount * 2 + 50) / 100)
}
'
