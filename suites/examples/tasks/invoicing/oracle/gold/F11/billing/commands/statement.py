"""billing statement FILE CUSTOMER --today DATE: the customer's unpaid invoices with
fees, then the balance."""

import argparse
import sys
from datetime import date

from billing import store
from billing.money import format_cents
from billing.statement import statement


def run(argv):
    parser = argparse.ArgumentParser(prog="billing statement")
    parser.add_argument("file")
    parser.add_argument("customer")
    parser.add_argument("--today", type=date.fromisoformat, required=True)
    args = parser.parse_args(argv)
    invoices = store.load(args.file)
    if not any(i.customer == args.customer for i in invoices):
        print(f"billing: no invoices for customer '{args.customer}'", file=sys.stderr)
        return 1
    lines, balance = statement(invoices, args.customer, args.today)
    for invoice_id, amount, fee in lines:
        print(invoice_id, format_cents(amount), "fee", format_cents(fee))
    print("balance", format_cents(balance))
    return 0
