import unittest

from billing.money import format_cents, to_cents


class MoneyTest(unittest.TestCase):
    def test_amounts_parse_to_exact_cents(self):
        self.assertEqual(to_cents("0.29"), 29)
        self.assertEqual(to_cents("19.99"), 1999)
        self.assertEqual(to_cents("1.10"), 110)
        self.assertEqual(to_cents("1200"), 120000)

    def test_a_half_cent_rounds_up(self):
        self.assertEqual(to_cents("2.675"), 268)
        self.assertEqual(to_cents("0.005"), 1)
        self.assertEqual(to_cents("0.004"), 0)

    def test_cents_format_with_two_decimals(self):
        self.assertEqual(format_cents(1235), "12.35")
        self.assertEqual(format_cents(5), "0.05")
        self.assertEqual(format_cents(-250), "-2.50")

    def test_an_amount_that_is_not_a_number_is_refused(self):
        for bad in ["", "abc", "1.2.3", "nan", "inf"]:
            with self.assertRaises(ValueError, msg=bad):
                to_cents(bad)
