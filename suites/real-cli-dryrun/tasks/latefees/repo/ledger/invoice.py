"""Invoices and the dates they fall due."""
from dataclasses import dataclass
from datetime import date


@dataclass
class Invoice:
    number: str
    amount_cents: int
    due: date
    paid: bool = False

    def days_overdue(self, today: date) -> int:
        return max(0, (today - self.due).days)
