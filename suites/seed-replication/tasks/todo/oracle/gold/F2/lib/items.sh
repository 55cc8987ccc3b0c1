# Items of the store: item N is line N, "[ ] text" (open) or "[x] text" (done).
# Sourced by every command that shows or changes items.

# ITEMS_AWK: awk functions over one store line; put it in front of an awk program
ITEMS_AWK='
# is_done(line): 1 when the item is checked off
function is_done(line) { return substr(line, 1, 4) == "[x] " }
# item_text(line): the item without its box, e.g. "(A) pay rent"
function item_text(line) { return substr(line, 5) }
# render(n, line): how list shows item n, e.g. "3 [ ] (A) pay rent"
function render(n, line) { return n " " line }
'

# update_item N VERB FUNCS CODE [AWK_OPTION...]: changes item N of the store.
# CODE is awk run on item N with its store line in the variable `line`; it may assign
# a new value to `line`, or "" to delete the item. FUNCS is more awk functions for
# CODE (or ""); AWK_OPTIONs (e.g. -v p=A) go to awk. The store is read whole, then
# written back, and "VERB N: TEXT" is printed with the item's text. Fails with
# "todo: no item N" (exit 1), leaving the store alone, when there is no item N.
update_item() {
    n=$1 verb=$2 funcs=$3 code=$4
    shift 4
    case $n in
        ''|0*|*[!0-9]*) die "not an item number: $n" ;;
    esac
    [ -f "$STORE" ] || die "no item $n"
    awk -v n="$n" -v verb="$verb" -v store="$STORE" "$@" "$ITEMS_AWK$funcs"'
        { items[NR] = $0 }
        END {
            if (n > NR) {
                printf "todo: no item %d\n", n > "/dev/stderr"
                exit 1
            }
            line = items[n]
            '"$code"'
            shown = (line == "") ? items[n] : line
            items[n] = line
            printf "" > store
            for (i = 1; i <= NR; i++)
                if (i != n || line != "") print items[i] > store
            close(store)
            printf "%s %d: %s\n", verb, n, item_text(shown)
        }
    ' "$STORE"
}
