"""billing remind FILE --today DATE: sends one reminder per overdue invoice through
bin/send_reminder, never twice: the ids reminded are kept in FILE.reminded."""

import argparse
import os
import subprocess
from datetime import date

from billing import store
from billing.reminders import due_reminders

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bin", "send_reminder")


def run(argv):
    parser = argparse.ArgumentParser(prog="billing remind")
    parser.add_argument("file")
    parser.add_argument("--today", type=date.fromisoformat, required=True)
    args = parser.parse_args(argv)
    sent_log = args.file + ".reminded"
    sent = set()
    if os.path.exists(sent_log):
        with open(sent_log) as f:
            sent = set(f.read().split())
    for invoice_id in due_reminders(store.load(args.file), args.today, sent):
        # Recorded before the irreversible call: a crash after it must not send twice.
        with open(sent_log, "a") as f:
            f.write(invoice_id + "\n")
        subprocess.run([TOOL, invoice_id], check=True, stdout=subprocess.DEVNULL)
        print("reminded", invoice_id)
    return 0
