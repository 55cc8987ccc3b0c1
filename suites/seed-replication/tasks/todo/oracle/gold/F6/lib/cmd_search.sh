# todo search WORD
# Prints the items whose text contains WORD (any case; plain text, not a pattern) in
# list format, with their item numbers. Exits 1, printing nothing, when none matches.
. "$LIB/items.sh"

cmd_search() {
    [ $# -eq 1 ] && [ -n "$1" ] || usage "search WORD"
    [ -f "$STORE" ] || exit 1
    word=$1 awk "$ITEMS_AWK"'
        BEGIN { word = tolower(ENVIRON["word"]) }
        index(tolower(item_text($0)), word) { print render(NR, $0); found++ }
        END { exit !found }
    ' "$STORE"
}

cmd_search "$@"
