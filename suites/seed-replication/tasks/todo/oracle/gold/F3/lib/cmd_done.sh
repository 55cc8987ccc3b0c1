# todo done N
# Checks off item N ("[ ] text" becomes "[x] text", priority kept) and prints
# "done N: TEXT". Checking off an item that is already done changes nothing.
. "$LIB/items.sh"

cmd_done() {
    [ $# -eq 1 ] || usage "done N"
    update_item "$1" done '' '
        if (!is_done(line)) line = "[x] " item_text(line)
    '
}

cmd_done "$@"
