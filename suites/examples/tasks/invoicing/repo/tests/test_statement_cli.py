import unittest

from tests import invoices_file, run_cli

ROWS = [
    "INV-1,acme,a@acme.example,1000.00,2026-03-01,",
    "INV-2,globex,g@globex.example,50.00,2026-03-01,",
    "INV-3,acme,a@acme.example,0.29,2026-05-25,",
]


class StatementCliTest(unittest.TestCase):
    def test_statement_prints_each_invoice_then_the_balance(self):
        done = run_cli("statement", invoices_file(self, ROWS), "acme", "--today", "2026-06-01")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(
            done.stdout,
            "INV-1 1000.00 fee 20.00\nINV-3 0.29 fee 0.00\nbalance 1020.29\n",
        )

    def test_an_unknown_customer_is_an_error(self):
        done = run_cli("statement", invoices_file(self, ROWS), "umbrella", "--today", "2026-06-01")
        self.assertEqual(done.returncode, 1)
        self.assertIn("no invoices for customer 'umbrella'", done.stderr)
