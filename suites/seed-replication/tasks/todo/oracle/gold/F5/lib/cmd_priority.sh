# todo priority N A|B|C
# Gives item N priority A, B or C, written "(A)" after its box (an older priority is
# replaced, the done box kept), and prints "priority N: TEXT".
. "$LIB/items.sh"
. "$LIB/priority.sh"

cmd_priority() {
    [ $# -eq 2 ] || usage "priority N A|B|C"
    case $2 in
        A|B|C) ;;
        *) usage "priority N A|B|C" ;;
    esac
    update_item "$1" priority "$PRIORITY_AWK" '
        line = set_priority(line, p)
    ' -v p="$2"
}

cmd_priority "$@"
