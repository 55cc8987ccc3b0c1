# invoicer remind FILE TODAY
# Sends one payment reminder per overdue invoice through bin/send_reminder (an
# irreversible action) and prints the number of each invoice reminded.
. "$LIB/overdue.sh"

cmd_remind() {
    [ $# -eq 2 ] || usage "remind FILE TODAY"
    need_file "$1"
    need_date "$2"
    list_overdue "$1" "$2" | while IFS= read -r number; do
        sh "$INVOICER_ROOT/bin/send_reminder" "$number" || exit 1
        printf '%s\n' "$number"
    done
}

cmd_remind "$@"
