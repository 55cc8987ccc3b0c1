import unittest
from datetime import date

from billing.export import HEADER, export_rows
from billing.store import Invoice

TODAY = date(2026, 6, 1)


class ExportTest(unittest.TestCase):
    def test_each_invoice_is_a_row_with_its_fee_and_total(self):
        invoices = [
            Invoice("INV-1", "acme", "a@acme.example", 2_525, date(2026, 4, 1)),
            Invoice("INV-2", "globex", "g@globex.example", 1_000, date(2026, 7, 1)),
        ]
        self.assertEqual(HEADER, ["id", "customer", "amount", "late_fee", "total"])
        self.assertEqual(export_rows(invoices, TODAY), [
            ["INV-1", "acme", "25.25", "0.51", "25.76"],
            ["INV-2", "globex", "10.00", "0.00", "10.00"],
        ])

    def test_a_paid_invoice_is_exported_without_a_fee(self):
        paid = Invoice("INV-3", "acme", "a@acme.example", 999, date(2026, 1, 1), date(2026, 5, 1))
        self.assertEqual(export_rows([paid], TODAY), [["INV-3", "acme", "9.99", "0.00", "9.99"]])
