"""billing export FILE --today DATE: the invoices as CSV on stdout."""

import argparse
import csv
import sys
from datetime import date

from billing import store
from billing.export import HEADER, export_rows


def run(argv):
    parser = argparse.ArgumentParser(prog="billing export")
    parser.add_argument("file")
    parser.add_argument("--today", type=date.fromisoformat, required=True)
    args = parser.parse_args(argv)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(HEADER)
    out.writerows(export_rows(store.load(args.file), args.today))
    return 0
