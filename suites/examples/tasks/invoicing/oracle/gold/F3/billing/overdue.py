"""Which invoices are late, and by how many days."""


def days_overdue(invoice, today):
    """Days since the due date of an unpaid invoice; 0 when paid or not yet due."""
    if invoice.paid is not None or today <= invoice.due:
        return 0
    return (today - invoice.due).days


def overdue_invoices(invoices, today):
    """The unpaid invoices past their due date, oldest due date first (then by id)."""
    late = [i for i in invoices if days_overdue(i, today) > 0]
    return sorted(late, key=lambda i: (i.due, i.id))
