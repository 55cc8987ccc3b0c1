import unittest
from datetime import date

from billing.overdue import days_overdue, overdue_invoices
from billing.store import Invoice

TODAY = date(2026, 6, 1)


def invoice(id, due, paid=None):
    return Invoice(id, "acme", "a@acme.example", 1000, due, paid)


class OverdueTest(unittest.TestCase):
    def test_days_overdue_count_from_the_due_date(self):
        self.assertEqual(days_overdue(invoice("A", date(2026, 5, 22)), TODAY), 10)
        self.assertEqual(days_overdue(invoice("B", TODAY), TODAY), 0)
        self.assertEqual(days_overdue(invoice("C", date(2026, 7, 1)), TODAY), 0)

    def test_a_paid_invoice_is_never_overdue(self):
        paid = invoice("A", date(2026, 1, 1), paid=date(2026, 5, 1))
        self.assertEqual(days_overdue(paid, TODAY), 0)

    def test_overdue_invoices_are_the_unpaid_late_ones_oldest_first(self):
        invoices = [
            invoice("A", date(2026, 5, 30)),
            invoice("B", date(2026, 3, 1)),
            invoice("C", date(2026, 3, 1), paid=date(2026, 3, 2)),
            invoice("D", date(2026, 6, 2)),
            invoice("E", date(2026, 3, 1)),
        ]
        self.assertEqual([i.id for i in overdue_invoices(invoices, TODAY)], ["B", "E", "A"])
