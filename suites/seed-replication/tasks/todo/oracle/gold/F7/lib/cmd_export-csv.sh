# todo export-csv
# Prints the items as CSV with a header: id,done,priority,text. done is yes or no,
# priority is A, B, C or empty, text is the item without box and priority; a text
# holding a comma or a double quote is quoted, its quotes doubled (RFC 4180).
. "$LIB/items.sh"
. "$LIB/priority.sh"

cmd_export_csv() {
    [ $# -eq 0 ] || usage "export-csv"
    echo "id,done,priority,text"
    [ -f "$STORE" ] || return 0
    awk "$ITEMS_AWK$PRIORITY_AWK"'
        function csv(s) {
            if (s ~ /[",]/) {
                gsub(/"/, "\"\"", s)
                s = "\"" s "\""
            }
            return s
        }
        {
            print NR "," (is_done($0) ? "yes" : "no") "," item_priority($0) "," csv(plain_text($0))
        }
    ' "$STORE"
}

cmd_export_csv "$@"
