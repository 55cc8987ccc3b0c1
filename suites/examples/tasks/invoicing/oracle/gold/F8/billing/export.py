"""Invoices as rows for a CSV export: amount, late fee and total per invoice."""

from billing.fees import late_fee_cents
from billing.money import format_cents

HEADER = ["id", "customer", "amount", "late_fee", "total"]


def export_rows(invoices, today):
    rows = []
    for inv in invoices:
        fee = late_fee_cents(inv, today)
        rows.append([
            inv.id,
            inv.customer,
            format_cents(inv.amount_cents),
            format_cents(fee),
            format_cents(inv.amount_cents + fee),
        ])
    return rows
