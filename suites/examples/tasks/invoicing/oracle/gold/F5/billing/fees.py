"""Late fees: 2% of the amount once an invoice is more than 30 days overdue."""

from billing.overdue import days_overdue

GRACE_DAYS = 30
FEE_PERCENT = 2


def late_fee_cents(invoice, today):
    """The fee in cents, rounded half up to the cent (integer arithmetic only)."""
    if days_overdue(invoice, today) <= GRACE_DAYS:
        return 0
    return (invoice.amount_cents * FEE_PERCENT + 50) // 100
