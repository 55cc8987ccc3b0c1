import unittest

from tests import invoices_file, run_cli


class PayCliTest(unittest.TestCase):
    def setUp(self):
        self.path = invoices_file(self, [
            "INV-1,acme,a@acme.example,0.29,2026-05-20,",
            "INV-2,globex,g@globex.example,19.99,2026-04-15,2026-04-10",
        ])

    def read(self):
        with open(self.path) as f:
            return f.read()

    def test_pay_records_the_payment_date_and_keeps_every_amount(self):
        done = run_cli("pay", self.path, "INV-1", "--on", "2026-06-01")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(self.read(), (
            "id,customer,email,amount,due,paid\n"
            "INV-1,acme,a@acme.example,0.29,2026-05-20,2026-06-01\n"
            "INV-2,globex,g@globex.example,19.99,2026-04-15,2026-04-10\n"
        ))

    def test_an_unknown_or_paid_invoice_is_refused_and_the_file_kept(self):
        before = self.read()
        for invoice in ["INV-9", "INV-2"]:
            done = run_cli("pay", self.path, invoice, "--on", "2026-06-01")
            self.assertEqual(done.returncode, 1, invoice)
            self.assertTrue(done.stderr.strip(), invoice)
        self.assertEqual(self.read(), before)
