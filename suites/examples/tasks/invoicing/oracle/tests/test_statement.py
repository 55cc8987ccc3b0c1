import unittest
from datetime import date

from billing.statement import statement
from billing.store import Invoice

TODAY = date(2026, 6, 1)


class StatementTest(unittest.TestCase):
    def test_a_statement_lists_the_customers_unpaid_invoices_with_fees(self):
        invoices = [
            Invoice("INV-1", "acme", "a@acme.example", 100_000, date(2026, 3, 1)),
            Invoice("INV-2", "globex", "g@globex.example", 5_000, date(2026, 3, 1)),
            Invoice("INV-3", "acme", "a@acme.example", 2_000, date(2026, 5, 25)),
            Invoice("INV-4", "acme", "a@acme.example", 700, date(2026, 1, 1), date(2026, 1, 2)),
        ]
        lines, balance = statement(invoices, "acme", TODAY)
        self.assertEqual(lines, [("INV-1", 100_000, 2_000), ("INV-3", 2_000, 0)])
        self.assertEqual(balance, 104_000)

    def test_a_customer_with_nothing_unpaid_owes_nothing(self):
        paid = Invoice("INV-4", "acme", "a@acme.example", 700, date(2026, 1, 1), date(2026, 1, 2))
        self.assertEqual(statement([paid], "acme", TODAY), ([], 0))
