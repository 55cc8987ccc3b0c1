# Money helpers. Amounts are whole cents in the data; people read units.cents.
# MONEY_AWK holds awk functions: put it in front of an awk program that needs them.
MONEY_AWK='
# fmt_cents(c): 12345 -> "123.45", 5 -> "0.05", -250 -> "-2.50"
function fmt_cents(c,    sign) {
    sign = ""
    if (c < 0) { sign = "-"; c = -c }
    return sprintf("%s%d.%02d", sign, int(c / 100), c % 100)
}
'
