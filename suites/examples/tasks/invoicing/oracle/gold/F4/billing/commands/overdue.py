"""billing overdue FILE --today DATE: one line per overdue invoice, oldest first."""

import argparse
from datetime import date

from billing import store
from billing.money import format_cents
from billing.overdue import days_overdue, overdue_invoices


def run(argv):
    parser = argparse.ArgumentParser(prog="billing overdue")
    parser.add_argument("file")
    parser.add_argument("--today", type=date.fromisoformat, required=True)
    args = parser.parse_args(argv)
    for inv in overdue_invoices(store.load(args.file), args.today):
        print(inv.id, inv.customer, format_cents(inv.amount_cents), days_overdue(inv, args.today))
    return 0
