# todo list [--open]
# Prints each item as "N [ ] text" or "N [x] text", N being the item number the other
# commands take; --open leaves the done items out (the others keep their numbers).
# Prints "no items" when there is nothing to show.
. "$LIB/items.sh"

cmd_list() {
    open_only=0
    case $#:${1-} in
        0:) ;;
        1:--open) open_only=1 ;;
        *) usage "list [--open]" ;;
    esac
    [ -f "$STORE" ] || { echo "no items"; return 0; }
    awk -v open_only="$open_only" "$ITEMS_AWK"'
        open_only && is_done($0) { next }
        { print render(NR, $0); shown++ }
        END { if (!shown) print "no items" }
    ' "$STORE"
}

cmd_list "$@"
