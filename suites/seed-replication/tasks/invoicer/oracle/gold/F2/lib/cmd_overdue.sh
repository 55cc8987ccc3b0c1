# invoicer overdue FILE TODAY
# Prints the number of each unpaid invoice whose due date is before TODAY, one per
# line, in file order.
. "$LIB/overdue.sh"

cmd_overdue() {
    [ $# -eq 2 ] || usage "overdue FILE TODAY"
    need_file "$1"
    need_date "$2"
    list_overdue "$1" "$2"
}

cmd_overdue "$@"
