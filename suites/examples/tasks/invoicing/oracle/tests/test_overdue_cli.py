import unittest

from tests import invoices_file, run_cli


class OverdueCliTest(unittest.TestCase):
    def test_overdue_lists_id_customer_amount_and_days_oldest_first(self):
        path = invoices_file(self, [
            "INV-1,acme,a@acme.example,0.29,2026-05-20,",
            "INV-2,globex,g@globex.example,450.10,2026-02-01,",
            "INV-3,acme,a@acme.example,19.99,2026-04-15,2026-04-10",
            "INV-4,acme,a@acme.example,5.00,2026-07-01,",
        ])
        done = run_cli("overdue", path, "--today", "2026-06-01")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "INV-2 globex 450.10 120\nINV-1 acme 0.29 12\n")

    def test_nothing_overdue_prints_nothing(self):
        path = invoices_file(self, ["INV-1,acme,a@acme.example,5.00,2026-07-01,"])
        done = run_cli("overdue", path, "--today", "2026-06-01")
        self.assertEqual((done.returncode, done.stdout), (0, ""))

    def test_today_is_required(self):
        path = invoices_file(self, ["INV-1,acme,a@acme.example,5.00,2026-07-01,"])
        self.assertNotEqual(run_cli("overdue", path).returncode, 0)
