# todo add TEXT...
# Appends the open item "[ ] TEXT" to the store (the words of TEXT joined by spaces)
# and prints "added N: TEXT", N being the new item's number.
cmd_add() {
    text=$*
    case $text in
        *[![:space:]]*) ;;
        *) usage "add TEXT..." ;;
    esac
    printf '[ ] %s\n' "$text" >> "$STORE" || die "cannot write $STORE"
    n=0
    while IFS= read -r _; do
        n=$((n + 1))
    done < "$STORE"
    printf 'added %d: %s\n' "$n" "$text"
}

cmd_add "$@"
