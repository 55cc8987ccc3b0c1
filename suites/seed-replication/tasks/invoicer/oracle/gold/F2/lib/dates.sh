# Calendar helpers. DATES_AWK holds awk functions: put it in front of an awk program
# that needs them. Dates are "YYYY-MM-DD" strings (proleptic Gregorian calendar).
DATES_AWK='
# day_number(d): days from 1970-01-01 to d (days-from-civil), so that the difference
# of two day numbers is the number of days between two dates
function day_number(d,    y, m, dd, era, yoe, doy, doe) {
    y = substr(d, 1, 4) + 0; m = substr(d, 6, 2) + 0; dd = substr(d, 9, 2) + 0
    if (m <= 2) y = y - 1
    era = int(y / 400)
    yoe = y - era * 400
    doy = int((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + dd - 1
    doe = yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy
    return era * 146097 + doe - 719468
}
# days_late(due, today): how many days after due today is (negative: not due yet)
function days_late(due, today) { return day_number(today) - day_number(due) }
'
