"""Amounts of money as whole cents, parsed exactly (never through a float) and
rounded half up to the cent."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation


def to_cents(text):
    """'12.34' -> 1234; '2.675' -> 268. Anything but a finite number is a ValueError."""
    try:
        amount = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if not amount.is_finite():
        raise ValueError(f"not an amount: {text!r}")
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def format_cents(cents):
    """1234 -> '12.34'."""
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), 100)
    return f"{sign}{units}.{rest:02d}"
