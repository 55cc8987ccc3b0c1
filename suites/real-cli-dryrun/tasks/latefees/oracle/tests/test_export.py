import unittest
from datetime import date, timedelta

from ledger.invoice import Invoice
from ledger.export import to_csv

TODAY = date(2026, 6, 1)


class ExportTest(unittest.TestCase):
    def test_header_names_the_columns(self):
        self.assertEqual(to_csv([], TODAY).splitlines()[0], "number,amount_cents,late_fee_cents,total_cents")

    def test_overdue_row_shows_the_fee(self):
        rows = to_csv([Invoice("INV-1", 10_000, TODAY - timedelta(days=40))], TODAY).splitlines()
        self.assertEqual(rows[1], "INV-1,10000,200,10200")

    def test_current_row_has_no_fee(self):
        rows = to_csv([Invoice("INV-2", 500, TODAY)], TODAY).splitlines()
        self.assertEqual(rows[1], "INV-2,500,0,500")


if __name__ == "__main__":
    unittest.main()
