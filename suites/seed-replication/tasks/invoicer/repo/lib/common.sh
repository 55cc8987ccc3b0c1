# Helpers shared by all invoicer commands; bin/invoicer sources this file first and
# sets LIB (this directory) and INVOICER_ROOT (the project root).
#
# Invoice files are CSV with a header line:
#   number,customer,amount_cents,due_date,paid
# amount_cents is a whole number of cents, due_date is YYYY-MM-DD and paid is "yes"
# or "no". Fields never contain commas, so `awk -F,` reads them; skip the header
# with NR > 1. Dates are passed in (TODAY arguments); nothing reads the clock.

# die MESSAGE: print "invoicer: MESSAGE" on stderr and exit 1
die() {
    printf 'invoicer: %s\n' "$*" >&2
    exit 1
}

# usage SYNOPSIS: print "usage: invoicer SYNOPSIS" on stderr and exit 2
usage() {
    printf 'usage: invoicer %s\n' "$1" >&2
    exit 2
}

# need_file FILE: die unless FILE is a readable file
need_file() {
    [ -f "$1" ] && [ -r "$1" ] || die "cannot read invoice file: $1"
}

# need_date DATE: die unless DATE looks like YYYY-MM-DD
need_date() {
    case $1 in
        [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
        *) die "not a date (want YYYY-MM-DD): $1" ;;
    esac
}
