# Shared by every step's test.sh: writes the reward the check is judged by.
pass() { echo 1 > /logs/verifier/reward.txt; exit 0; }
fail() { echo "$1" >&2; echo 0 > /logs/verifier/reward.txt; exit 0; }
