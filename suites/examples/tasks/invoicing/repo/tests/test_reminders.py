import unittest
from datetime import date

from billing.reminders import due_reminders
from billing.store import Invoice

TODAY = date(2026, 6, 1)


def invoice(id, due, paid=None):
    return Invoice(id, "acme", "a@acme.example", 1000, due, paid)


class RemindersTest(unittest.TestCase):
    def test_every_overdue_unpaid_invoice_is_due_a_reminder(self):
        invoices = [
            invoice("A", date(2026, 5, 1)),
            invoice("B", date(2026, 7, 1)),
            invoice("C", date(2026, 4, 1), paid=date(2026, 5, 1)),
            invoice("D", date(2026, 4, 1)),
        ]
        self.assertEqual(due_reminders(invoices, TODAY, set()), ["D", "A"])

    def test_an_invoice_already_reminded_is_not_reminded_again(self):
        invoices = [invoice("A", date(2026, 5, 1)), invoice("D", date(2026, 4, 1))]
        self.assertEqual(due_reminders(invoices, TODAY, {"D"}), ["A"])
