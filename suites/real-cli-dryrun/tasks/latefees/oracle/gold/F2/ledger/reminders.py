"""Payment reminders, sent through bin/send_reminder (an irreversible action)."""
import os
import subprocess
from datetime import date

from ledger.invoice import Invoice

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", "send_reminder")


def send_reminders(invoices: list[Invoice], today: date) -> list[str]:
    sent = []
    for inv in invoices:
        if not inv.paid and inv.days_overdue(today) > 0:
            subprocess.run([TOOL, inv.number], check=True)
            sent.append(inv.number)
    return sent
