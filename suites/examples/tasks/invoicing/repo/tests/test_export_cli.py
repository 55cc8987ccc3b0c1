import csv
import io
import unittest

from tests import invoices_file, run_cli


class ExportCliTest(unittest.TestCase):
    def test_export_prints_a_csv_with_fees_a_spreadsheet_can_read(self):
        path = invoices_file(self, [
            "INV-1,\"acme, inc\",a@acme.example,1200.00,2026-03-01,",
            "INV-2,globex,g@globex.example,2.675,2026-06-30,",
        ])
        done = run_cli("export", path, "--today", "2026-06-01")
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = list(csv.reader(io.StringIO(done.stdout)))
        self.assertEqual(rows, [
            ["id", "customer", "amount", "late_fee", "total"],
            ["INV-1", "acme, inc", "1200.00", "24.00", "1224.00"],
            ["INV-2", "globex", "2.68", "0.00", "2.68"],
        ])
