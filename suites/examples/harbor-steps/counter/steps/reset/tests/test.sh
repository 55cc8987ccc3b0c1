#!/bin/sh
. /tests/reward.sh
cd /app && rm -f "$COUNTER_STATE"
sh counter.sh >/dev/null && sh counter.sh >/dev/null
[ -z "$(sh counter.sh reset)" ] || fail "reset prints something"
[ "$(sh counter.sh)" = 1 ] || fail "the call after reset does not print 1"
pass
