import unittest
from datetime import date, timedelta

from ledger.invoice import Invoice
from ledger.fees import late_fee_cents

TODAY = date(2026, 6, 1)


class LateFeeTest(unittest.TestCase):
    def test_two_percent_after_thirty_days(self):
        inv = Invoice("INV-1", 10_000, TODAY - timedelta(days=40))
        self.assertEqual(late_fee_cents(inv, TODAY), 200)

    def test_no_fee_within_thirty_days(self):
        inv = Invoice("INV-2", 10_000, TODAY - timedelta(days=30))
        self.assertEqual(late_fee_cents(inv, TODAY), 0)

    def test_no_fee_when_paid(self):
        inv = Invoice("INV-3", 10_000, TODAY - timedelta(days=90), paid=True)
        self.assertEqual(late_fee_cents(inv, TODAY), 0)


if __name__ == "__main__":
    unittest.main()
