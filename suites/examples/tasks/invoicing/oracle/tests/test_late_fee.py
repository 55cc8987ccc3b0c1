import unittest
from datetime import date, timedelta

from billing.fees import late_fee_cents
from billing.store import Invoice

TODAY = date(2026, 6, 1)


def invoice(cents, days_late, paid=None):
    return Invoice("INV-1", "acme", "a@acme.example", cents, TODAY - timedelta(days=days_late), paid)


class LateFeeTest(unittest.TestCase):
    def test_no_fee_up_to_thirty_days_late(self):
        self.assertEqual(late_fee_cents(invoice(100_000, 30), TODAY), 0)
        self.assertEqual(late_fee_cents(invoice(100_000, 0), TODAY), 0)

    def test_two_percent_after_thirty_days(self):
        self.assertEqual(late_fee_cents(invoice(100_000, 31), TODAY), 2_000)

    def test_the_fee_rounds_half_a_cent_up(self):
        self.assertEqual(late_fee_cents(invoice(2_525, 40), TODAY), 51)
        self.assertEqual(late_fee_cents(invoice(1_234, 40), TODAY), 25)
        self.assertEqual(late_fee_cents(invoice(1_224, 40), TODAY), 24)

    def test_a_paid_invoice_owes_no_fee(self):
        self.assertEqual(late_fee_cents(invoice(100_000, 90, paid=TODAY), TODAY), 0)
