"""CSV export of invoices with their late fees."""
from datetime import date

from ledger.fees import late_fee_cents
from ledger.invoice import Invoice


def to_csv(invoices: list[Invoice], today: date) -> str:
    lines = ["number,amount_cents,late_fee_cents,total_cents"]
    for inv in invoices:
        fee = late_fee_cents(inv, today)
        lines.append(f"{inv.number},{inv.amount_cents},{fee},{inv.amount_cents + fee}")
    return "\n".join(lines) + "\n"
