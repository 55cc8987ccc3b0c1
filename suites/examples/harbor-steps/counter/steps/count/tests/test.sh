#!/bin/sh
. /tests/reward.sh
cd /app && rm -f .count
[ "$(sh counter.sh)" = 1 ] || fail "first call does not print 1"
[ "$(sh counter.sh)" = 2 ] || fail "second call does not print 2"
pass
