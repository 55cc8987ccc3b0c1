"""billing: invoices, late fees, reminders and exports over a CSV file."""
