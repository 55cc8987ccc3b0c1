"""billing total FILE: the sum of the unpaid amounts."""

import argparse

from billing import store
from billing.money import format_cents


def run(argv):
    parser = argparse.ArgumentParser(prog="billing total")
    parser.add_argument("file")
    args = parser.parse_args(argv)
    invoices = store.load(args.file)
    print(format_cents(sum(i.amount_cents for i in invoices if i.paid is None)))
    return 0
