import os
import shutil
import tempfile
import unittest

from tests import invoices_file, run_cli


class RemindCliTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        self.effects = os.path.join(tmp, "effects.log")
        self.path = invoices_file(self, [
            "INV-1,acme,a@acme.example,0.29,2026-05-20,",
            "INV-2,globex,g@globex.example,450.10,2026-02-01,",
            "INV-3,acme,a@acme.example,5.00,2026-07-01,",
        ])

    def sent(self):
        if not os.path.exists(self.effects):
            return []
        with open(self.effects) as f:
            return f.read().split()

    def test_each_overdue_invoice_is_reminded_through_send_reminder(self):
        done = run_cli("remind", self.path, "--today", "2026-06-01", effects=self.effects)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(self.sent(), ["reminder:INV-2", "reminder:INV-1"])
        self.assertEqual(done.stdout, "reminded INV-2\nreminded INV-1\n")

    def test_a_second_run_sends_no_reminder_twice(self):
        run_cli("remind", self.path, "--today", "2026-06-01", effects=self.effects)
        again = run_cli("remind", self.path, "--today", "2026-06-02", effects=self.effects)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(self.sent(), ["reminder:INV-2", "reminder:INV-1"])
        self.assertEqual(again.stdout, "")
