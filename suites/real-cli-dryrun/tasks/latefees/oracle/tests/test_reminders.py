import os
import tempfile
import unittest
from datetime import date, timedelta
from unittest import mock

from ledger.invoice import Invoice
from ledger.reminders import send_reminders

TODAY = date(2026, 6, 1)


class RemindersTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "effects.log")
        patcher = mock.patch.dict(os.environ, {"LOOPBENCH_EFFECTS": self.log})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(self.dir.cleanup)

    def test_only_overdue_unpaid_invoices_are_reminded(self):
        invoices = [
            Invoice("INV-1", 5_000, TODAY - timedelta(days=10)),
            Invoice("INV-2", 5_000, TODAY + timedelta(days=10)),
            Invoice("INV-3", 5_000, TODAY - timedelta(days=10), paid=True),
        ]
        self.assertEqual(send_reminders(invoices, TODAY), ["INV-1"])

    def test_each_reminder_goes_through_the_tool(self):
        send_reminders([Invoice("INV-9", 1, TODAY - timedelta(days=1))], TODAY)
        with open(self.log) as f:
            self.assertEqual(f.read(), "reminder:INV-9\n")


if __name__ == "__main__":
    unittest.main()
