# Helpers shared by all todo commands; bin/todo sources this file first and sets LIB
# (this directory), TODO_ROOT (the project root) and STORE (the store file).
#
# The store holds one item per line:
#   [ ] buy milk          an open item
#   [x] call mom          a done item
#   [ ] (A) pay rent      an item with priority A, B or C, written after the box
# Item N is line N of the store. A missing store is an empty list. Commands that
# change the store read it whole, then write it back.

# die MESSAGE: print "todo: MESSAGE" on stderr and exit 1
die() {
    printf 'todo: %s\n' "$*" >&2
    exit 1
}

# usage SYNOPSIS: print "usage: todo SYNOPSIS" on stderr and exit 2
usage() {
    printf 'usage: todo %s\n' "$1" >&2
    exit 2
}
