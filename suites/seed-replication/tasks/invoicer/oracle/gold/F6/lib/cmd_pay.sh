# invoicer pay FILE NUMBER
# Prints FILE with invoice NUMBER marked paid; FILE itself is not changed. Fails with
# "invoicer: no invoice NUMBER" (exit 1, nothing on stdout) when there is none.
cmd_pay() {
    [ $# -eq 2 ] || usage "pay FILE NUMBER"
    need_file "$1"
    number=$2 awk -F, -v OFS=, '
        BEGIN { number = ENVIRON["number"] }
        NR > 1 && $1 == number { $5 = "yes"; found = 1 }
        { lines[NR] = $0 }
        END {
            if (!found) {
                print "invoicer: no invoice " number > "/dev/stderr"
                exit 1
            }
            for (i = 1; i <= NR; i++) print lines[i]
        }
    ' "$1"
}

cmd_pay "$@"
