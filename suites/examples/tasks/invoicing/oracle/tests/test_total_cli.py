import unittest

from tests import invoices_file, run_cli


class TotalCliTest(unittest.TestCase):
    def test_total_is_the_sum_of_the_unpaid_amounts(self):
        path = invoices_file(self, [
            "INV-1,acme,a@acme.example,0.29,2026-05-01,",
            "INV-2,acme,a@acme.example,19.99,2026-05-01,2026-05-02",
            "INV-3,globex,g@globex.example,1.10,2026-06-01,",
        ])
        done = run_cli("total", path)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "1.39\n")

    def test_total_of_a_file_with_nothing_unpaid_is_zero(self):
        path = invoices_file(self, ["INV-1,acme,a@acme.example,5.00,2026-05-01,2026-05-02"])
        done = run_cli("total", path)
        self.assertEqual((done.returncode, done.stdout), (0, "0.00\n"))
