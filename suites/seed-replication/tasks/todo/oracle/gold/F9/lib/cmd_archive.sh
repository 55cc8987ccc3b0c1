# todo archive
# Moves the done items from the store to the end of the archive "$TODO_FILE.done",
# keeping the open items in their order, and prints "archived K items" ("1 item").
. "$LIB/items.sh"

cmd_archive() {
    [ $# -eq 0 ] || usage "archive"
    [ -f "$STORE" ] || { echo "archived 0 items"; return 0; }
    awk -v store="$STORE" -v archive="$STORE.done" "$ITEMS_AWK"'
        { items[NR] = $0 }
        END {
            printf "" > store
            for (i = 1; i <= NR; i++) {
                if (is_done(items[i])) { print items[i] >> archive; moved++ }
                else print items[i] > store
            }
            close(store)
            printf "archived %d item%s\n", moved, (moved == 1) ? "" : "s"
        }
    ' "$STORE"
}

cmd_archive "$@"
