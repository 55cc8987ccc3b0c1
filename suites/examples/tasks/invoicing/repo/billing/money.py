"""Amounts of money as whole cents."""


def to_cents(text):
    """'12.34' -> 1234."""
    return int(float(text) * 100)


def format_cents(cents):
    """1234 -> '12.34'."""
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), 100)
    return f"{sign}{units}.{rest:02d}"
