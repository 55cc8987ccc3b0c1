# Priorities: an item may carry "(A)", "(B)" or "(C)" right after its box:
#   "[ ] (A) pay rent". PRIORITY_AWK holds awk functions over one store line.
PRIORITY_AWK='
# item_priority(line): "A", "B" or "C", or "" for an item without a priority
function item_priority(line) {
    if (substr(line, 5) ~ /^\([ABC]\) /) return substr(line, 6, 1)
    return ""
}
# plain_text(line): the item text without its box and priority, e.g. "pay rent"
function plain_text(line) {
    return substr(line, item_priority(line) == "" ? 5 : 9)
}
# set_priority(line, p): the line with priority p, replacing an older one
function set_priority(line, p) {
    return substr(line, 1, 4) "(" p ") " plain_text(line)
}
'
