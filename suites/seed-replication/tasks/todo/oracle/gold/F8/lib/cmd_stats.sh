# todo stats
# Prints how many items there are, how many are done (with the percentage, rounded)
# and open, and how many open items have each priority:
#   items: 6 / done: 2 (33%) / open: 4 / priority A: 2 / priority B: 0 / priority C: 1
. "$LIB/items.sh"
. "$LIB/priority.sh"

cmd_stats() {
    [ $# -eq 0 ] || usage "stats"
    store=$STORE
    [ -f "$store" ] || store=/dev/null
    awk "$ITEMS_AWK$PRIORITY_AWK"'
        is_done($0) { done++; next }
        { open++; by[item_priority($0)]++ }
        END {
            total = done + open
            printf "items: %d\n", total
            printf "done: %d (%d%%)\n", done, total ? int(done * 100 / total + 0.5) : 0
            printf "open: %d\n", open
            printf "priority A: %d\n", by["A"]
            printf "priority B: %d\n", by["B"]
            printf "priority C: %d\n", by["C"]
        }
    ' "$store"
}

cmd_stats "$@"
