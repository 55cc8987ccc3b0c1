"""A customer's statement: their unpaid invoices with late fees, and the balance."""

from billing.fees import late_fee_cents


def statement(invoices, customer, today):
    """([(id, amount_cents, fee_cents)], balance_cents) of the unpaid invoices of
    `customer`, in file order."""
    lines = [
        (inv.id, inv.amount_cents, late_fee_cents(inv, today))
        for inv in invoices
        if inv.customer == customer and inv.paid is None
    ]
    return lines, sum(amount + fee for _, amount, fee in lines)
