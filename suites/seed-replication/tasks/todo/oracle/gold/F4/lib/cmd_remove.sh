# todo remove N
# Deletes item N from the store (the items after it move up one number) and prints
# "removed N: TEXT".
. "$LIB/items.sh"

cmd_remove() {
    [ $# -eq 1 ] || usage "remove N"
    update_item "$1" removed '' '
        line = ""
    '
}

cmd_remove "$@"
