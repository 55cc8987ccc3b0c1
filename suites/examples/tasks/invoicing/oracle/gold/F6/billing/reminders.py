"""Which invoices are due a payment reminder."""

from billing.overdue import overdue_invoices


def due_reminders(invoices, today, already_sent):
    """Ids of the overdue unpaid invoices not in `already_sent`, oldest first."""
    return [i.id for i in overdue_invoices(invoices, today) if i.id not in already_sent]
