"""Reads and writes the invoices file: a CSV with the header
id,customer,email,amount,due,paid (paid is empty while the invoice is unpaid)."""

import csv
from dataclasses import dataclass
from datetime import date
from typing import Optional

from billing.money import format_cents, to_cents

FIELDS = ["id", "customer", "email", "amount", "due", "paid"]


@dataclass
class Invoice:
    id: str
    customer: str
    email: str
    amount_cents: int
    due: date
    paid: Optional[date] = None


def parse_date(text):
    return date.fromisoformat(text)


def load(path):
    with open(path, newline="") as f:
        return [
            Invoice(
                id=row["id"],
                customer=row["customer"],
                email=row["email"],
                amount_cents=to_cents(row["amount"]),
                due=parse_date(row["due"]),
                paid=parse_date(row["paid"]) if row["paid"] else None,
            )
            for row in csv.DictReader(f)
        ]


def save(path, invoices):
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(FIELDS)
        for inv in invoices:
            out.writerow([
                inv.id,
                inv.customer,
                inv.email,
                format_cents(inv.amount_cents),
                inv.due.isoformat(),
                inv.paid.isoformat() if inv.paid else "",
            ])
