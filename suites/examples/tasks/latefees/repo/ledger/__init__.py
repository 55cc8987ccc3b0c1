"""A tiny invoicing library."""
