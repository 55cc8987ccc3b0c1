"""billing pay FILE ID --on DATE: records the payment of an unpaid invoice."""

import argparse
import sys
from datetime import date

from billing import store


def run(argv):
    parser = argparse.ArgumentParser(prog="billing pay")
    parser.add_argument("file")
    parser.add_argument("invoice")
    parser.add_argument("--on", type=date.fromisoformat, required=True)
    args = parser.parse_args(argv)
    invoices = store.load(args.file)
    found = [i for i in invoices if i.id == args.invoice]
    if not found:
        print(f"billing: no invoice '{args.invoice}'", file=sys.stderr)
        return 1
    if found[0].paid is not None:
        print(f"billing: invoice '{args.invoice}' was paid on {found[0].paid}", file=sys.stderr)
        return 1
    found[0].paid = args.on
    store.save(args.file, invoices)
    return 0
