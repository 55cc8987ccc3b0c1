"""Late fees: 2% of the amount once an unpaid invoice is more than 30 days overdue."""
from datetime import date

from ledger.invoice import Invoice

GRACE_DAYS = 30
RATE_PERCENT = 2


def late_fee_cents(inv: Invoice, today: date) -> int:
    if inv.paid or inv.days_overdue(today) <= GRACE_DAYS:
        return 0
    return inv.amount_cents * RATE_PERCENT // 100
